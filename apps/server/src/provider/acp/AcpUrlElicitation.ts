import { URL_OPEN_OPTION_ID, URL_QUESTION_ID, type RawNative } from "@planbridge/contracts"
import { Schema } from "effect"
import { warningDraft } from "../kernel/EventDraft.ts"
import { withAnswered, withClosed } from "../kernel/OpenRequests.ts"
import { promptResolved, requestResolved } from "../kernel/RequestDrafts.ts"
import { replyMessage, withTurn, type Pending, type QuestionPending, type Reply } from "./AcpPending.ts"
import { decode, turnStateDrafts, type AcpState, type Mapped } from "./AcpState.ts"

/**
 * ACP URL-mode elicitation after the person's answer. Opening the page is `accept`: the request
 * is answered (`request.resolved responded`) but its prompt stays pending, marked answered, until
 * the agent's `elicitation/complete` for its `elicitationId` resolves it `answered`; the agent's
 * exit resolves it `provider_exited`. A decline or cancel ends both at once, as any question.
 */

const CompleteParams = Schema.Struct({ elicitationId: Schema.String })

const openedAnswer = [{ questionId: URL_QUESTION_ID, selectedOptionIds: [URL_OPEN_OPTION_ID] }]

const awaitsCompletion = (p: Pending): p is QuestionPending =>
  p.wire === "question" && p.prompt.url?.elicitationId !== undefined

/** Our reply to `p`, when it opens a URL prompt: the request answered, the prompt left pending. */
export const urlOpened = (s: AcpState, p: Pending, reply: Reply, raw: RawNative): Mapped | undefined => {
  if (!awaitsCompletion(p) || !("result" in reply)) return undefined
  if (p.handler.decodeResponse(reply.result, p.request)?.outcome !== "answered") return undefined
  const state = { ...s, pending: withAnswered(s.pending, p.key) }
  const resolved = requestResolved(withTurn(s.turnId ?? p.turnId), raw, p.requestId, "responded")
  return { state, drafts: [resolved, ...turnStateDrafts(state, raw)] }
}

/** `elicitation/complete`: the flow at the URL is done; its prompt resolves `answered`. */
export const elicitationComplete = (s: AcpState, params: unknown, raw: RawNative): Mapped => {
  const complete = decode(CompleteParams, params)
  if (complete === undefined)
    return { state: s, drafts: [warningDraft("update_invalid", "elicitation/complete did not decode", raw)] }
  const p = [...s.pending.values()]
    .filter(awaitsCompletion)
    .find((q) => q.prompt.url?.elicitationId === complete.elicitationId)
  // Unknown, declined or already over: nothing is pending on it any more.
  if (p === undefined) return { state: s, drafts: [] }
  const state = { ...s, pending: withClosed(s.pending, p.key) }
  const at = withTurn(s.turnId ?? p.turnId)
  const prompt = promptResolved(at, raw, p.prompt.promptId, "answered", openedAnswer)
  if (p.answered) return { state, drafts: [prompt, ...turnStateDrafts(state, raw)] }
  // Completed before anyone opened it here (done elsewhere): the request is answered as opened.
  const reply = { result: p.handler.encode({ outcome: "answered", answers: openedAnswer }, p.request) }
  return {
    state,
    drafts: [prompt, requestResolved(at, raw, p.requestId, "responded"), ...turnStateDrafts(state, raw)],
    replies: [replyMessage(p.nativeId, reply)]
  }
}
