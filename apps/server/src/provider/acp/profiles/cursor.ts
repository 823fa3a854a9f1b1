import { Result, Schema } from "effect"
import { definedFields } from "../../../util/definedFields.ts"
import {
  acpCapabilities,
  type AcpCommand,
  type AcpProfile,
  type PlanHandler,
  type QuestionHandler,
  type TodosHandler
} from "../AcpProfile.ts"

/**
 * Cursor's `agent acp` (documented at cursor.com/docs/cli/acp). Modes `agent | plan | ask`;
 * structured questions, proposed plans and todo lists arrive only through Cursor's blocking
 * extension requests, whose answers are nested `{outcome:{outcome:…}}` objects (a flat
 * `{outcome:"accepted"}` made Cursor report "User cancelled").
 */

const OptStr = Schema.optionalKey(Schema.NullOr(Schema.String))

const AskQuestion = Schema.Struct({
  title: OptStr,
  questions: Schema.Array(
    Schema.Struct({
      id: Schema.String,
      prompt: Schema.String,
      options: Schema.Array(Schema.Struct({ id: Schema.String, label: Schema.String })),
      allowMultiple: Schema.optionalKey(Schema.NullOr(Schema.Boolean))
    })
  )
})

const AskQuestionResponse = Schema.Struct({
  outcome: Schema.Union([
    Schema.Struct({
      outcome: Schema.Literal("answered"),
      answers: Schema.Array(
        Schema.Struct({ questionId: Schema.String, selectedOptionIds: Schema.Array(Schema.String) })
      )
    }),
    Schema.Struct({ outcome: Schema.Literal("skipped"), reason: Schema.optionalKey(Schema.String) }),
    Schema.Struct({ outcome: Schema.Literal("cancelled") })
  ])
})

const CreatePlan = Schema.Struct({ toolCallId: OptStr, name: OptStr, overview: OptStr, plan: Schema.String })

const CreatePlanResponse = Schema.Struct({
  outcome: Schema.Union([
    Schema.Struct({ outcome: Schema.Literal("accepted"), planUri: Schema.optionalKey(Schema.String) }),
    Schema.Struct({ outcome: Schema.Literal("rejected"), reason: Schema.optionalKey(Schema.String) }),
    Schema.Struct({ outcome: Schema.Literal("cancelled") })
  ])
})

const UpdateTodos = Schema.Struct({
  todos: Schema.Array(Schema.Struct({ id: OptStr, content: OptStr, status: OptStr })),
  merge: Schema.optionalKey(Schema.NullOr(Schema.Boolean))
})

const cursorAskQuestion: QuestionHandler = {
  kind: "question",
  decode: (params) =>
    Result.map(Schema.decodeUnknownResult(AskQuestion)(params), (ask) => ({
      title: ask.title ?? undefined,
      questions: ask.questions.map((q) => ({
        id: q.id,
        label: q.prompt,
        options: q.options,
        multiSelect: q.allowMultiple === true,
        // Cursor's answer carries option ids only, and every question is expected answered.
        allowFreeform: false,
        required: true
      }))
    })),
  encode: (outcome) =>
    outcome.outcome === "answered"
      ? {
          outcome: {
            outcome: "answered",
            answers: outcome.answers.map((a) => ({ questionId: a.questionId, selectedOptionIds: a.selectedOptionIds }))
          }
        }
      : { outcome },
  decodeResponse: (result) => Result.getOrUndefined(Schema.decodeUnknownResult(AskQuestionResponse)(result))?.outcome
}

const cursorCreatePlan: PlanHandler = {
  kind: "plan",
  decode: (params) =>
    Result.map(Schema.decodeUnknownResult(CreatePlan)(params), ({ toolCallId, name, overview, plan }) => ({
      toolCallId: toolCallId ?? undefined,
      title: name ?? undefined,
      // The overview is shown above the plan body in Cursor's own UI; keep it in the markdown.
      markdown: overview !== null && overview !== undefined && overview.length > 0 ? `${overview}\n\n${plan}` : plan
    })),
  encode: (outcome) => ({ outcome }),
  decodeResponse: (result) => Result.getOrUndefined(Schema.decodeUnknownResult(CreatePlanResponse)(result))?.outcome
}

const cursorUpdateTodos: TodosHandler = {
  kind: "todos",
  decode: (params) =>
    Result.map(Schema.decodeUnknownResult(UpdateTodos)(params), (update) => ({
      todos: update.todos.map((t) =>
        definedFields({ id: t.id ?? undefined, content: t.content ?? undefined, status: t.status ?? undefined })
      ),
      merge: update.merge === true
    })),
  ack: (todos) => ({ outcome: { outcome: "accepted", todos } })
}

/** The Cursor CLI, `agent acp`, by default; tests point it at a scripted agent. */
export const cursorProfile = (options: AcpCommand = {}): AcpProfile => ({
  provider: "cursor",
  label: "Cursor",
  command: options.command ?? "agent",
  args: options.args ?? ["acp"],
  modes: { agent: "default", plan: "plan", ask: "ask" },
  preferredModes: { default: "agent", plan: "plan", ask: "ask" },
  // Structured plan updates come only through cursor/update_todos: turned on at the first one.
  capabilities: acpCapabilities({
    supportsPlanMode: true,
    supportsAskMode: true,
    supportsStructuredUserInput: true,
    supportsMultiSelect: true,
    supportsExitPlanMode: true,
    // cursor/create_plan's answer carries a rejection's reason, never an edited plan.
    supportsPlanFeedback: true
  }),
  auth: { methodId: "cursor_login", env: ["CURSOR_API_KEY", "CURSOR_AUTH_TOKEN"] },
  extensionRequests: {
    "cursor/ask_question": cursorAskQuestion,
    "cursor/create_plan": cursorCreatePlan,
    "cursor/update_todos": cursorUpdateTodos
  },
  extensionNotifications: { "cursor/update_todos": cursorUpdateTodos },
  // Cursor mirrors its todo list as ACP `plan` updates without the todo ids (and with a
  // `priority`); the todo list, with ids and merge semantics, is the one to publish.
  checklistAuthority: "todos"
})
