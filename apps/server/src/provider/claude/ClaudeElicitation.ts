import type { ElicitationRequest, ElicitationResult, OnElicitation } from "@anthropic-ai/claude-agent-sdk"
import { redactAnswerEntries, UserInputPrompt, urlPrompt, type PromptId } from "@planbridge/contracts"
import { Deferred, Effect, Exit, Option, Schema } from "effect"
import type { CheckedAnswer } from "../kernel/CheckedAnswer.ts"
import { fieldQuestions, formContent, formFields, RequestedSchema, type FormField } from "../kernel/ElicitationForm.ts"
import type { DecisionPair, NativeDecision } from "./ClaudeDecisions.ts"
import type { ClaudeSessionCore } from "./ClaudeSessionCore.ts"

/**
 * The Agent SDK's `onElicitation` (an MCP server asking the user, through Claude Code) as a
 * canonical prompt: form mode one question per field (`kernel/ElicitationForm.ts`), URL mode a URL
 * prompt (`PromptUrl`). It rides the `canUseTool` machinery: the call is a local line keyed
 * `elicitation:<requestId>`, the callback waits for the receipt of our recorded decision, and the
 * decision's native form is the MCP `ElicitResult` (`{action, content?}`), exactly as answered.
 * Claude's `elicitation_complete` message is not read yet: a URL prompt resolves when opened.
 */

/** The request's "tool" name in Planbridge's records (it is no tool of the model's). */
export const ELICITATION_TOOL = "onElicitation"

export const elicitationKey = (requestId: string) => `elicitation:${requestId}`

const Request = Schema.Struct({
  serverName: Schema.String,
  message: Schema.String,
  mode: Schema.optionalKey(Schema.Literals(["form", "url"])),
  url: Schema.optionalKey(Schema.String),
  elicitationId: Schema.optionalKey(Schema.String),
  requestedSchema: Schema.optionalKey(RequestedSchema),
  title: Schema.optionalKey(Schema.String)
})

/** The prompt of an elicitation and its form's fields, or why it cannot be shown. */
export const elicitationPrompt = (
  input: unknown,
  promptId: PromptId
):
  | { readonly ok: true; readonly prompt: UserInputPrompt; readonly fields: ReadonlyArray<FormField> }
  | { readonly ok: false; readonly error: string } => {
  const decoded = Schema.decodeUnknownOption(Request)(input)
  if (Option.isNone(decoded)) return { ok: false, error: "the elicitation request did not decode" }
  const request = decoded.value
  const title = request.title ?? `${request.serverName} asks`
  const checked = (prompt: unknown) => Schema.decodeUnknownExit(UserInputPrompt)(prompt)
  if (request.mode === "url") {
    if (request.url === undefined) return { ok: false, error: "a URL elicitation without its url" }
    const url = {
      url: request.url,
      ...(request.elicitationId === undefined ? {} : { elicitationId: request.elicitationId })
    }
    const prompt = checked(urlPrompt({ promptId, message: request.message, url, title }))
    return Exit.isSuccess(prompt)
      ? { ok: true, prompt: prompt.value, fields: [] }
      : { ok: false, error: String(prompt.cause) }
  }
  const fields = formFields(request.requestedSchema ?? {})
  if (!fields.ok) return fields
  const prompt = checked({
    promptId,
    title,
    description: request.message,
    questions: fieldQuestions(fields.fields),
    source: "native",
    blocking: true
  })
  return Exit.isSuccess(prompt)
    ? { ok: true, prompt: prompt.value, fields: fields.fields }
    : { ok: false, error: String(prompt.cause) }
}

/** An answer to an elicitation prompt: the decision recorded, and `accept` with the content as given. */
export const elicitationAnswerDecision = (
  prompt: UserInputPrompt,
  fields: ReadonlyArray<FormField>,
  checked: CheckedAnswer
): DecisionPair => {
  const answers = checked.entries.map((e) => ({
    questionId: e.question.id,
    selectedOptionIds: e.selected.map((o) => o.id),
    ...(e.text === undefined ? {} : { text: e.text })
  }))
  const result =
    prompt.url !== undefined ? { action: "accept" } : { action: "accept", content: formContent(answers, fields) }
  return {
    decision: { kind: "prompt", resolution: "answered", answers: redactAnswerEntries(prompt, checked.answer.answers) },
    native: { behavior: "allow", patch: result }
  }
}

/** The callback's result for our decision: an answer as made; a skip `decline`; a cancel or denial `cancel`. */
const resultOf = (native: NativeDecision): ElicitationResult => {
  if (native.behavior === "deny") return { action: "cancel" }
  const { action, content } = native.patch
  if (action !== "accept") return { action: "decline" }
  return content === undefined
    ? { action: "accept" }
    : { action: "accept", content: content as ElicitationResult["content"] }
}

export const makeOnElicitation = (deps: {
  readonly core: ClaudeSessionCore
  readonly run: <A>(effect: Effect.Effect<A>) => Promise<A>
}): OnElicitation => {
  const { core, run } = deps
  return (request: ElicitationRequest, options) =>
    run(
      Effect.gen(function* () {
        const key = elicitationKey(options.requestId)
        // Through JSON, as every SDK message: the SDK leaves absent fields `undefined`.
        const asked = JSON.parse(JSON.stringify(request)) as Record<string, unknown>
        const line = core.local({ kind: "elicitation", key, request: asked })
        const receipt = yield* core.call(key, line)
        const abort = () => void run(Effect.ignore(core.cancel(key, "The elicitation was cancelled.")))
        options.signal.addEventListener("abort", abort, { once: true })
        if (options.signal.aborted) abort()
        const result = resultOf(yield* Deferred.await(receipt))
        options.signal.removeEventListener("abort", abort)
        // What Claude Code gets is recorded as an action only: form content may hold a secret.
        yield* core.record(core.local({ kind: "elicitation-result", key, action: result.action }))
        return result
      })
    )
}
