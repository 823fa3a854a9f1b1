import type { ElicitationRequest, ElicitationResult, OnElicitation } from "@anthropic-ai/claude-agent-sdk"
import { redactAnswerEntries, type PromptId, type RawNative, type UserInputPrompt } from "@planbridge/contracts"
import { Effect, Option, Result, Schema } from "effect"
import { fieldAnswers, type CheckedAnswer } from "../kernel/CheckedAnswer.ts"
import {
  elicitationAccept,
  elicitationOf,
  RequestedSchema,
  URL_OPENED,
  type Elicitation,
  type FormField
} from "../kernel/ElicitationForm.ts"
import type { DecisionPair, NativeDecision } from "./ClaudeDecisions.ts"
import { receipt, resolve, type ClaudeMappingState, type Mapped } from "./ClaudeMappingState.ts"
import type { ClaudeSessionCore } from "./ClaudeSessionCore.ts"
import type { Decision } from "./ClaudeTranscript.ts"
import { withAnswered } from "../kernel/OpenRequests.ts"
import { requestResolved, urlFlow } from "../kernel/RequestDrafts.ts"
import { mapped, sessionStateDraft } from "../kernel/Mapped.ts"

/**
 * The Agent SDK's `onElicitation` (an MCP server asking the user, through Claude Code) as a
 * canonical prompt: form mode one question per field (`kernel/ElicitationForm.ts`), URL mode a URL
 * prompt (`PromptUrl`). It rides the `canUseTool` machinery: the call is a local line keyed
 * `elicitation:<requestId>`, the callback waits for the receipt of our recorded decision, and the
 * decision's native form is the MCP `ElicitResult` (`{action, content?}`), exactly as answered.
 *
 * URL mode, as Codex's and ACP's: opening the page (`accept`) answers the request
 * (`request.resolved responded`, the MCP server told `accept`), but its prompt stays pending,
 * marked answered, until Claude Code's `system/elicitation_complete` for its `elicitationId` (the
 * MCP server's `notifications/elicitation/complete`) resolves it `answered`; the exit resolves it
 * `provider_exited`. A decline or cancel ends both at once, as any question.
 */

/** The request's "tool" name in Planbridge's records (it is no tool of the model's). */
export const ELICITATION_TOOL = "onElicitation"

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
export const elicitationPrompt = (input: unknown, promptId: PromptId): Result.Result<Elicitation, string> => {
  const decoded = Schema.decodeUnknownOption(Request)(input)
  if (Option.isNone(decoded)) return Result.fail("the elicitation request did not decode")
  const { title, serverName, message, mode, url, elicitationId, requestedSchema } = decoded.value
  const asked = { promptId, title: title ?? `${serverName} asks`, message, requestedSchema }
  if (mode !== "url") return elicitationOf(asked)
  if (url === undefined) return Result.fail("a URL elicitation without its url")
  return elicitationOf({ ...asked, url: { url, ...(elicitationId === undefined ? {} : { elicitationId }) } })
}

/** An answer to an elicitation prompt: the decision recorded, and `accept` with the content as given. */
export const elicitationAnswerDecision = (
  prompt: UserInputPrompt,
  fields: ReadonlyArray<FormField>,
  checked: CheckedAnswer
): DecisionPair => ({
  decision: { kind: "prompt", resolution: "answered", answers: redactAnswerEntries(prompt, checked.answer.answers) },
  native: { behavior: "allow", patch: elicitationAccept(prompt.url !== undefined, fieldAnswers(checked), fields) }
})

/** Claude Code's `system/elicitation_complete` message. */
export const ElicitationComplete = Schema.Struct({ mcp_server_name: Schema.String, elicitation_id: Schema.String })

/** Our decision on `key`; an opened URL page answers the request, its prompt left pending (see above). */
export const decided = (s: ClaudeMappingState, key: string, decision: Decision, raw: RawNative): Mapped => {
  const request = s.requests.get(key)
  // Only an elicitation's URL prompt has a flow, and only one named by its id says when it completes.
  const pageOpened =
    decision.kind === "prompt" &&
    decision.resolution === "answered" &&
    request?.prompt?.url?.elicitationId !== undefined
  if (request === undefined || !pageOpened) return resolve(s, key, decision, raw)
  const requests = withAnswered(s.requests, key)
  const running = [...requests.values()].every((r) => r.answered) && s.turn !== undefined
  const drafts = [requestResolved({ turnId: request.turnId }, raw, request.requestId, "responded")]
  const handed = receipt({ ...s, requests }, key, decision)
  return { ...handed, drafts: running ? [...drafts, sessionStateDraft("running", [], raw)] : drafts }
}

/** `system/elicitation_complete`: the flow at the URL is done; its prompt resolves `answered`. */
export const elicitationCompleted = (s: ClaudeMappingState, elicitationId: string, raw: RawNative): Mapped => {
  const request = urlFlow(s.requests, elicitationId)
  // Unknown, declined or already over: nothing is pending on it any more. Completed before anyone
  // opened it here (done elsewhere), the request is answered as opened.
  if (request === undefined) return mapped(s)
  return resolve(s, request.key, { kind: "prompt", resolution: "answered", answers: [URL_OPENED] }, raw)
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

export const makeOnElicitation =
  (core: ClaudeSessionCore): OnElicitation =>
  (request: ElicitationRequest, options) =>
    core.run(
      Effect.gen(function* () {
        const key = `elicitation:${options.requestId}`
        // Through JSON, as every SDK message: the SDK leaves absent fields `undefined`.
        const asked = JSON.parse(JSON.stringify(request)) as Record<string, unknown>
        const line = core.local({ kind: "elicitation", key, request: asked })
        const onAbort = Effect.ignore(core.cancel(key, "The elicitation was cancelled."))
        const result = resultOf(yield* core.awaitReceipt(key, line, options.signal, onAbort))
        // What Claude Code gets is recorded as an action only: form content may hold a secret.
        yield* core.record(core.local({ kind: "elicitation-result", key, action: result.action }))
        return result
      })
    )
