import type { ItemType } from "@planbridge/contracts"
import { Schema } from "effect"

/**
 * The parts of the Claude Agent SDK (0.3.333) message stream and tool payloads that the
 * mapping reads. Structs ignore extra keys, so new SDK fields pass through untouched (they
 * stay in `raw`); a message of a known type that lacks a field we need fails decoding and
 * becomes a `runtime.warning`, never a crash. A message's `type` (and `subtype`) chose its
 * Schema in the mapping, so the Schema does not check it again.
 */

export const ContentBlock = Schema.Struct({
  type: Schema.String,
  id: Schema.optionalKey(Schema.String),
  name: Schema.optionalKey(Schema.String),
  text: Schema.optionalKey(Schema.String),
  thinking: Schema.optionalKey(Schema.String),
  input: Schema.optionalKey(Schema.Unknown),
  tool_use_id: Schema.optionalKey(Schema.String),
  content: Schema.optionalKey(Schema.Unknown),
  is_error: Schema.optionalKey(Schema.NullOr(Schema.Boolean))
})
export type ContentBlock = typeof ContentBlock.Type

export const AssistantMessage = Schema.Struct({
  message: Schema.Struct({ id: Schema.String, content: Schema.Array(ContentBlock) })
})

export const UserMessage = Schema.Struct({
  message: Schema.Struct({ content: Schema.Union([Schema.String, Schema.Array(ContentBlock)]) }),
  tool_use_result: Schema.optionalKey(Schema.Unknown),
  isReplay: Schema.optionalKey(Schema.Boolean)
})

export const StreamEvent = Schema.Struct({
  event: Schema.Struct({
    type: Schema.String,
    index: Schema.optionalKey(Schema.Finite),
    message: Schema.optionalKey(Schema.Struct({ id: Schema.String })),
    content_block: Schema.optionalKey(ContentBlock),
    delta: Schema.optionalKey(
      Schema.Struct({
        // message_delta's delta (stop_reason) has no type.
        type: Schema.optionalKey(Schema.String),
        text: Schema.optionalKey(Schema.String),
        thinking: Schema.optionalKey(Schema.String)
      })
    )
  })
})

export const SystemInit = Schema.Struct({
  permissionMode: Schema.String,
  model: Schema.String,
  session_id: Schema.String,
  /** Protocol capabilities for feature detection (`ask_user_question_unanswered_v1`, …; CLI 2.1.333). */
  capabilities: Schema.optionalKey(Schema.Array(Schema.String)),
  /** `source` is the scope the server was defined in (`user`, `project`, `local`, `plugin`, …; CLI 2.1.333). */
  mcp_servers: Schema.optionalKey(
    Schema.Array(
      Schema.Struct({ name: Schema.String, status: Schema.String, source: Schema.optionalKey(Schema.String) })
    )
  )
})

export const SystemStatus = Schema.Struct({
  permissionMode: Schema.optionalKey(Schema.String)
})

export const ResultMessage = Schema.Struct({
  subtype: Schema.String,
  duration_ms: Schema.optionalKey(Schema.Finite),
  terminal_reason: Schema.optionalKey(Schema.NullOr(Schema.String)),
  result: Schema.optionalKey(Schema.String),
  errors: Schema.optionalKey(Schema.Array(Schema.String)),
  usage: Schema.optionalKey(
    Schema.Struct({
      input_tokens: Schema.optionalKey(Schema.Finite),
      output_tokens: Schema.optionalKey(Schema.Finite),
      cache_read_input_tokens: Schema.optionalKey(Schema.NullOr(Schema.Finite))
    })
  )
})
export type ResultMessage = typeof ResultMessage.Type

// ---- tool payloads (sdk-tools.d.ts) -------------------------------------------------------------

export const AskUserQuestionInput = Schema.Struct({
  questions: Schema.NonEmptyArray(
    Schema.Struct({
      question: Schema.String,
      header: Schema.optionalKey(Schema.String),
      options: Schema.Array(Schema.Struct({ label: Schema.String, description: Schema.optionalKey(Schema.String) })),
      multiSelect: Schema.optionalKey(Schema.Boolean)
    })
  )
})
export type AskUserQuestionInput = typeof AskUserQuestionInput.Type

/** The CLI fills `plan` (and `planFilePath`) from the plan file before `canUseTool` sees it. */
export const ExitPlanModeInput = Schema.Struct({
  plan: Schema.String,
  planFilePath: Schema.optionalKey(Schema.String)
})

const TodoStatus = Schema.Literals(["pending", "in_progress", "completed"])
export const Todo = Schema.Struct({
  content: Schema.String,
  status: TodoStatus,
  activeForm: Schema.optionalKey(Schema.String)
})
export type Todo = typeof Todo.Type
export const TodoWriteInput = Schema.Struct({ todos: Schema.Array(Todo) })
export const TodoWriteOutput = Schema.Struct({ newTodos: Schema.Array(Todo) })

export const TaskCreateInput = Schema.Struct({
  subject: Schema.String,
  activeForm: Schema.optionalKey(Schema.String)
})
export const TaskCreateOutput = Schema.Struct({ task: Schema.Struct({ id: Schema.String, subject: Schema.String }) })
export const TaskUpdateInput = Schema.Struct({
  taskId: Schema.String,
  subject: Schema.optionalKey(Schema.String),
  activeForm: Schema.optionalKey(Schema.String),
  status: Schema.optionalKey(Schema.Literals(["pending", "in_progress", "completed", "deleted"]))
})
export const TaskUpdateOutput = Schema.Struct({ success: Schema.Boolean, taskId: Schema.String })
const ListedTask = Schema.Struct({ id: Schema.String, subject: Schema.String, status: TodoStatus })
export const TaskListOutput = Schema.Struct({ tasks: Schema.Array(ListedTask) })
export const TaskGetOutput = Schema.Struct({ task: Schema.NullOr(ListedTask) })

/** What `canUseTool` returns (the SDK's `PermissionResult`, the fields we set). */
export const PermissionResult = Schema.Union([
  Schema.Struct({
    behavior: Schema.Literal("allow"),
    updatedInput: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
  }),
  Schema.Struct({
    behavior: Schema.Literal("deny"),
    message: Schema.String
  })
])
export type PermissionResult = typeof PermissionResult.Type

/** A tool's item fields by its exact name (never used to classify prompts): its kind, the name as title. */
export const toolItemOf = (toolName: string): { itemType: ItemType; toolName: string; title: string } => ({
  itemType:
    toolName === "Bash"
      ? "command"
      : toolName === "Write" || toolName === "Edit" || toolName === "NotebookEdit"
        ? "file_change"
        : "tool_call",
  toolName,
  title: toolName
})

const isTextPart = Schema.is(Schema.Struct({ text: Schema.String }))

/** A tool result's content (a string or text blocks) as text. */
export const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((part: unknown) => (isTextPart(part) ? part.text : "")).join("")
      : ""
