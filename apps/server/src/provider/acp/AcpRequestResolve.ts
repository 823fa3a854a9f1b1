import {
  OptionId,
  QuestionId,
  redactAnswerEntries,
  type PlanId,
  type RawNative,
  type RequestResolution,
  type TurnId,
  type UserInputAnswerEntry
} from "@planbridge/contracts"
import { Exit, Result, Schema } from "effect"
import { rawOf } from "../kernel/EventDraft.ts"
import { jsonRpcIdKey, type JsonRpcId } from "../kernel/jsonRpcId.ts"
import { awaitingInTurn, withAnswered, withClosed } from "../kernel/OpenRequests.ts"
import { requestEnd, requestResolved, urlFlow } from "../kernel/RequestDrafts.ts"
import { definedFields } from "../../util/definedFields.ts"
import { URL_OPENED } from "../kernel/ElicitationForm.ts"
import * as N from "./AcpNative.ts"
import { cancelReply, replyMessage } from "./AcpRequestAnswer.ts"
import { pendingFlags, PLAN_ACCEPT, PLAN_REJECT, type Pending, type QuestionPending } from "./AcpRequestOpen.ts"
import type { AcpState, Drafts, Mapped } from "./AcpState.ts"
import { each, mapped, sessionStateDraft, warned } from "../kernel/Mapped.ts"

/**
 * A request's life, last step: it stops pending, pure. Our answer as written to the wire
 * (`clientResponse`), the agent withdrawing it (`$/cancel_request`), a URL flow completing
 * (`elicitation/complete`), its turn ending or the agent exiting: each gives the resolution
 * events (`resolutionDrafts`), which the session records before the reply is written.
 */

const decodePermissionResponse = Schema.decodeUnknownExit(N.PermissionResponse)

/**
 * Resolution events for a request our wire answer `reply` ended. One that ended unanswered (its
 * turn ended, the agent withdrew it or exited) ends as the kernel's `requestEnd` says.
 */
const resolutionDrafts = (p: Pending, reply: N.Reply, raw: RawNative, turnId: TurnId | undefined): Drafts => {
  const at = definedFields({ turnId })
  const resolved = (resolution: RequestResolution, optionId?: OptionId) =>
    requestResolved(at, raw, p.requestId, resolution, optionId)
  /** A chosen option: the decision on the plan it reviews (if any), then the request resolved with it. */
  const decided = (planId: PlanId | undefined, approved: boolean, optionId: OptionId, feedback?: string): Drafts => {
    if (planId === undefined || turnId === undefined) return [resolved("responded", optionId)]
    const payload = { planId, decision: approved ? "approved" : "rejected", ...definedFields({ feedback }) } as const
    return [{ type: "plan.decision", turnId, raw, payload }, resolved("responded", optionId)]
  }

  const result = "result" in reply ? reply.result : undefined
  // An error answers nothing; an answered request (an opened URL prompt) has only its prompt left.
  if (p.answered || result === undefined) return requestEnd(at, raw, p, "cancelled")
  switch (p.wire) {
    case "permission": {
      const exit = decodePermissionResponse(result)
      if (Exit.isFailure(exit)) return [resolved("responded")]
      const outcome = exit.value.outcome
      if (outcome.outcome === "cancelled") return [resolved("cancelled")]
      const chosen = p.options.find((o) => o.optionId === outcome.optionId)
      const approved = chosen !== undefined && chosen.kind.startsWith("allow")
      return decided(p.planId, approved, OptionId.make(outcome.optionId))
    }
    case "question": {
      const outcome = p.handler.decodeResponse(result, p.request)
      if (outcome === undefined || outcome.outcome === "cancelled") return requestEnd(at, raw, p, "cancelled")
      if (outcome.outcome === "skipped") return requestEnd(at, raw, p, "empty", [], outcome.reason)
      const entries = outcome.answers.map((a): UserInputAnswerEntry => ({
        questionId: QuestionId.make(a.questionId),
        ...(a.selectedOptionIds.length > 0 || a.text === undefined
          ? { selectedOptionIds: a.selectedOptionIds.map((o) => OptionId.make(o)) }
          : {}),
        ...definedFields({ text: a.text })
      }))
      return requestEnd(at, raw, p, "answered", redactAnswerEntries(p.prompt, entries))
    }
    case "plan": {
      const outcome = p.handler.decodeResponse(result)
      if (outcome === undefined || outcome.outcome === "cancelled") return [resolved("cancelled")]
      if (outcome.outcome === "accepted") return decided(p.planId, true, PLAN_ACCEPT)
      return decided(p.planId, false, PLAN_REJECT, outcome.reason)
    }
  }
}

/** After a request stopped pending mid-turn: waiting on what is left, or running again. */
const turnStateDrafts = (s: AcpState, raw: RawNative): Drafts => {
  if (s.turnId === undefined) return []
  const flags = pendingFlags(s)
  return [sessionStateDraft(flags.length > 0 ? "waiting" : "running", flags, raw)]
}

/** `p` stops pending with its events `drafts` (and the replies it is owed), then the turn's state. */
const closed = (s: AcpState, p: Pending, raw: RawNative, drafts: Drafts, replies: ReadonlyArray<unknown> = []) => {
  const state = { ...s, pending: withClosed(s.pending, p.key) }
  return { state, drafts: [...drafts, ...turnStateDrafts(state, raw)], replies }
}

/** Our answer to an agent request, exactly as written to the wire: it stops pending. */
export const clientResponse = (s: AcpState, id: JsonRpcId, reply: N.Reply): Mapped => {
  const p = s.pending.get(jsonRpcIdKey(id))
  if (p === undefined) return mapped(s)
  const raw = rawOf("acp.client-response", p.method, "result" in reply ? reply.result : { error: reply.error })
  return urlOpened(s, p, reply, raw) ?? closed(s, p, raw, resolutionDrafts(p, reply, raw, s.turnId ?? p.turnId))
}

const CancelRequest = Schema.Struct({ requestId: Schema.Union([Schema.String, Schema.Number]) })

/** The agent cancelled one of its own requests: it resolves `cancelled` and gets -32800. */
export const withdrawn = (s: AcpState, params: unknown, raw: RawNative): Mapped => {
  const cancel = Result.getOrUndefined(Schema.decodeUnknownResult(CancelRequest)(params))
  const p = cancel === undefined ? undefined : s.pending.get(jsonRpcIdKey(cancel.requestId))
  if (p === undefined) return mapped(s)
  const reply = replyMessage(p.nativeId, { error: { code: -32800, message: "Request cancelled" } })
  return closed(s, p, raw, requestEnd(definedFields({ turnId: p.turnId }), raw, p, "cancelled"), [reply])
}

/** The agent stopped waiting (its turn ended): whatever it still asked in `turnId` is cancelled, on both sides. */
export const cancelledWithTurn = (s: AcpState, turnId: TurnId, raw: RawNative): Mapped =>
  each(s, awaitingInTurn(s.pending, turnId), (next, p) => ({
    state: { ...next, pending: withClosed(next.pending, p.key) },
    drafts: requestEnd({ turnId }, raw, p, "cancelled"),
    replies: [replyMessage(p.nativeId, cancelReply(p))]
  }))

/*
 * ACP URL-mode elicitation after the person's answer. Opening the page is `accept`: the request
 * is answered (`request.resolved responded`) but its prompt stays pending, marked answered, until
 * the agent's `elicitation/complete` for its `elicitationId` resolves it `answered`; the agent's
 * exit resolves it `provider_exited`. A decline or cancel ends both at once, as any question.
 */

const CompleteParams = Schema.Struct({ elicitationId: Schema.String })

const awaitsCompletion = (p: Pending): p is QuestionPending =>
  p.wire === "question" && p.prompt.url?.elicitationId !== undefined

/** Our reply to `p`, when it opens a URL prompt: the request answered, the prompt left pending. */
const urlOpened = (s: AcpState, p: Pending, reply: N.Reply, raw: RawNative): Mapped | undefined => {
  if (!awaitsCompletion(p) || !("result" in reply)) return undefined
  if (p.handler.decodeResponse(reply.result, p.request)?.outcome !== "answered") return undefined
  const state = { ...s, pending: withAnswered(s.pending, p.key) }
  const resolved = requestResolved(definedFields({ turnId: s.turnId ?? p.turnId }), raw, p.requestId, "responded")
  return { state, drafts: [resolved, ...turnStateDrafts(state, raw)] }
}

/** `elicitation/complete`: the flow at the URL is done; its prompt resolves `answered`. */
export const elicitationComplete = (s: AcpState, params: unknown, raw: RawNative): Mapped => {
  const complete = Result.getOrUndefined(Schema.decodeUnknownResult(CompleteParams)(params))
  if (complete === undefined) return warned(s, "update_invalid", "elicitation/complete did not decode", raw)
  const p = urlFlow(s.pending, complete.elicitationId)
  // Unknown, declined or already over: nothing is pending on it any more.
  if (p?.wire !== "question") return mapped(s)
  const ended = requestEnd(definedFields({ turnId: s.turnId ?? p.turnId }), raw, p, "answered", [URL_OPENED])
  if (p.answered) return closed(s, p, raw, ended)
  // Completed before anyone opened it here (done elsewhere): the request is answered as opened.
  const reply = { result: p.handler.encode({ outcome: "answered", answers: [URL_OPENED] }, p.request) }
  return closed(s, p, raw, ended, [replyMessage(p.nativeId, reply)])
}
