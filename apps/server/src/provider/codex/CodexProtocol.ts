import { Schema, Struct } from "effect"
import { PermissionsLine } from "./CodexPermissions.ts"

/**
 * Effect Schemas for the `codex app-server` messages the adapter decodes (0.171.0, checked
 * against `codex app-server generate-json-schema --experimental` in the conformance test).
 * Only the fields the mapping reads are declared; decoding drops the rest, which is why every
 * canonical event keeps the whole native message in `raw`.
 */

export const JsonRpcId = Schema.Union([Schema.String, Schema.Finite])
export type JsonRpcId = typeof JsonRpcId.Type

/** The four shapes of a newline-delimited JSON-RPC message (Codex omits the `jsonrpc` field). */
export const JsonRpcNotification = Schema.Struct({ method: Schema.String, params: Schema.optionalKey(Schema.Unknown) })
export type JsonRpcNotification = typeof JsonRpcNotification.Type
export const JsonRpcRequest = Schema.Struct({ id: JsonRpcId, ...JsonRpcNotification.fields })
export type JsonRpcRequest = typeof JsonRpcRequest.Type
export const JsonRpcError = Schema.Struct({
  code: Schema.Finite,
  message: Schema.String,
  data: Schema.optionalKey(Schema.Unknown)
})
export type JsonRpcError = typeof JsonRpcError.Type
export const JsonRpcResponse = Schema.Union([
  Schema.Struct({ id: JsonRpcId, result: Schema.Unknown }),
  Schema.Struct({ id: JsonRpcId, error: JsonRpcError })
])
export type JsonRpcResponse = typeof JsonRpcResponse.Type

// ---- threads and turns ---------------------------------------------------------------------

export const ThreadStatus = Schema.Union([
  Schema.Struct({ type: Schema.Literal("notLoaded") }),
  Schema.Struct({ type: Schema.Literal("idle") }),
  Schema.Struct({ type: Schema.Literal("systemError") }),
  Schema.Struct({ type: Schema.Literal("active"), activeFlags: Schema.Array(Schema.String) })
])
export type ThreadStatus = typeof ThreadStatus.Type

export const ThreadStatusChanged = Schema.Struct({ status: ThreadStatus })

export const TurnError = Schema.Struct({ message: Schema.String })

export const Turn = Schema.Struct({
  id: Schema.String,
  status: Schema.Literals(["completed", "interrupted", "failed", "inProgress"]),
  error: Schema.NullOr(TurnError),
  durationMs: Schema.NullOr(Schema.Finite)
})

export const TurnNotification = Schema.Struct({ turn: Turn })

export const Thread = Schema.Struct({ id: Schema.String, cwd: Schema.String, cliVersion: Schema.String })

/** `thread/start` and `thread/resume` results. */
export const ThreadOpenResult = Schema.Struct({
  thread: Thread,
  model: Schema.String,
  /** What Codex applied (`AskForApproval`, `SandboxPolicy`), sent back on each turn (CodexPermissions.ts). */
  approvalPolicy: Schema.optionalKey(Schema.Json),
  sandbox: Schema.optionalKey(Schema.Json)
})

export const TurnStartResult = Schema.Struct({ turn: Turn })

/** One layer of `config/read {includeLayers: true}` (0.171.0); the rest is not read. */
export const ConfigReadLayer = Schema.Struct({
  name: Schema.Struct({ type: Schema.String, file: Schema.optionalKey(Schema.NullOr(Schema.String)) }),
  config: Schema.optionalKey(
    Schema.NullOr(
      Schema.Struct({
        mcp_servers: Schema.optionalKey(Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown))),
        /** The user's own settings, kept for the default mode (CodexPermissions.ts). */
        approval_policy: Schema.optionalKey(Schema.Unknown),
        sandbox_mode: Schema.optionalKey(Schema.Unknown)
      })
    )
  )
})
export type ConfigReadLayer = typeof ConfigReadLayer.Type

/** `config/read {includeLayers: true}`: the layers, highest precedence first. */
export const ConfigReadResult = Schema.Struct({
  layers: Schema.optionalKey(Schema.NullOr(Schema.Array(ConfigReadLayer)))
})

/**
 * What the transport saw that is no app-server message: a transcript's `local` lines. A line
 * over `MAX_LINE_BYTES` keeps its first `LINE_HEAD_BYTES` and how much of it was read; the
 * adapter's permission decision before `thread/start` is a `permissions` line (CodexPermissions.ts).
 */
export const CodexLocal = Schema.Union([
  PermissionsLine,
  Schema.Struct({ kind: Schema.Literal("unreadable"), line: Schema.String, reason: Schema.String }),
  Schema.Struct({ kind: Schema.Literal("tooLong"), head: Schema.String, bytes: Schema.Finite }),
  Schema.Struct({
    kind: Schema.Literal("exit"),
    code: Schema.NullOr(Schema.Finite),
    signal: Schema.NullOr(Schema.String),
    expected: Schema.Boolean
  })
])
export type CodexLocal = typeof CodexLocal.Type

/** What the adapter reads from its own `turn/start` request (for replayed transcripts). */
export const TurnStartParams = Schema.Struct({
  collaborationMode: Schema.optionalKey(Schema.NullOr(Schema.Struct({ mode: Schema.Literals(["plan", "default"]) })))
})

// ---- items ---------------------------------------------------------------------------------

/** Every item has a type and an id; its type chooses the schema of the rest (below). */
export const ItemHead = Schema.Struct({ type: Schema.String, id: Schema.String })

export const UserMessageItem = Schema.Struct({
  content: Schema.Array(Schema.Struct({ text: Schema.optionalKey(Schema.String) }))
})
/** `agentMessage` and `plan`. */
export const TextItem = Schema.Struct({ text: Schema.String })
export const ReasoningItem = Schema.Struct({
  summary: Schema.Array(Schema.String),
  content: Schema.Array(Schema.String)
})
const ToolStatus = Schema.Literals(["inProgress", "completed", "failed", "declined"])
export const CommandExecutionItem = Schema.Struct({
  command: Schema.String,
  status: ToolStatus,
  aggregatedOutput: Schema.NullOr(Schema.String)
})
export const FileChangeItem = Schema.Struct({ status: ToolStatus })
/** `mcpToolCall` and `dynamicToolCall`. */
export const ToolCallItem = Schema.Struct({ tool: Schema.String, status: ToolStatus })

export const ItemNotification = Schema.Struct({ turnId: Schema.String, item: Schema.Unknown })

/** `item/agentMessage/delta`, `item/plan/delta`, reasoning and output deltas share this shape. */
export const ItemDelta = Schema.Struct({ turnId: Schema.String, itemId: Schema.String, delta: Schema.String })

// ---- checklists, usage, diagnostics --------------------------------------------------------

export const TurnPlanUpdated = Schema.Struct({
  turnId: Schema.String,
  explanation: Schema.NullOr(Schema.String),
  plan: Schema.Array(
    Schema.Struct({ step: Schema.String, status: Schema.Literals(["pending", "inProgress", "completed"]) })
  )
})

const TokenUsageBreakdown = Schema.Struct({
  totalTokens: Schema.Finite,
  inputTokens: Schema.Finite,
  cachedInputTokens: Schema.Finite,
  outputTokens: Schema.Finite,
  reasoningOutputTokens: Schema.Finite
})
export const ThreadTokenUsageUpdated = Schema.Struct({
  turnId: Schema.String,
  tokenUsage: Schema.Struct({ last: TokenUsageBreakdown })
})

export const ErrorNotification = Schema.Struct({ error: TurnError, willRetry: Schema.Boolean, turnId: Schema.String })
export const WarningNotification = Schema.Struct({ message: Schema.String })
/** `configWarning` and `deprecationNotice`. */
export const SummaryNotification = Schema.Struct({ summary: Schema.String, details: Schema.NullOr(Schema.String) })

// ---- server requests -----------------------------------------------------------------------

export const RequestUserInputQuestion = Schema.Struct({
  id: Schema.String,
  header: Schema.String,
  question: Schema.String,
  isOther: Schema.Boolean,
  isSecret: Schema.Boolean,
  options: Schema.NullOr(Schema.Array(Schema.Struct({ label: Schema.String, description: Schema.String })))
})

export const RequestUserInputParams = Schema.Struct({
  threadId: Schema.String,
  turnId: Schema.String,
  itemId: Schema.String,
  questions: Schema.Array(RequestUserInputQuestion),
  /** Absent in payloads older than the field: means blocking. */
  isBlocking: Schema.optionalKey(Schema.Boolean)
})
export type RequestUserInputParams = typeof RequestUserInputParams.Type

/** The answer the client sends back: labels, plus free text as `"user_note: …"`. */
export const RequestUserInputResponse = Schema.Struct({
  answers: Schema.Record(Schema.String, Schema.Struct({ answers: Schema.Array(Schema.String) }))
})
export type RequestUserInputResponse = typeof RequestUserInputResponse.Type

/** A decision is a string (`accept`, `decline`, …) or a single-key object carrying an amendment. */
export const ApprovalDecision = Schema.Union([Schema.String, Schema.Record(Schema.String, Schema.Unknown)])
export type ApprovalDecision = typeof ApprovalDecision.Type

export const CommandApprovalParams = Schema.Struct({
  turnId: Schema.String,
  itemId: Schema.String,
  approvalId: Schema.optionalKey(Schema.NullOr(Schema.String)),
  reason: Schema.optionalKey(Schema.NullOr(Schema.String)),
  command: Schema.optionalKey(Schema.NullOr(Schema.String)),
  /** The command's working directory (absolute). */
  cwd: Schema.optionalKey(Schema.NullOr(Schema.String)),
  availableDecisions: Schema.optionalKey(Schema.NullOr(Schema.Array(ApprovalDecision)))
})
/** A file-change approval says only why (it has no command, place or decision list). */
export const FileChangeApprovalParams = CommandApprovalParams.mapFields(Struct.pick(["turnId", "itemId", "reason"]))

export const ServerRequestResolved = Schema.Struct({ requestId: JsonRpcId })
