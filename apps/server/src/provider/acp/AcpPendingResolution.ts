import {
  OptionId,
  QuestionId,
  redactAnswerEntries,
  type PlanId,
  type PromptResolutionKind,
  type RawNative,
  type RequestResolution,
  type TurnId,
  type UserInputAnswerEntry
} from "@planbridge/contracts"
import { Exit, Schema } from "effect"
import type { EventDraft } from "../kernel/EventDraft.ts"
import * as N from "./AcpNative.ts"
import { PLAN_ACCEPT, PLAN_REJECT, withTurn, type Pending, type Reply } from "./AcpPending.ts"
import { definedFields } from "../../util/definedFields.ts"

/** How a pending agent request ends (pure): our cancelling reply, and the resolution events. */

const decodePermissionResponse = Schema.decodeUnknownExit(N.PermissionResponse)

/** The reply that cancels a request nobody answered. */
export const cancelReply = (p: Pending): Reply => {
  if (p.wire === "permission") return { result: { outcome: { outcome: "cancelled" } } }
  return p.wire === "question"
    ? { result: p.handler.encode({ outcome: "cancelled" }, p.request) }
    : { result: p.handler.encode({ outcome: "cancelled" }) }
}

/**
 * Resolution events for a request that stopped pending: from the client's wire answer, or
 * `forced` when nobody answered (turn ended, agent exited).
 */
export const resolutionDrafts = (
  p: Pending,
  reply: Reply | undefined,
  forced: (RequestResolution & PromptResolutionKind) | undefined,
  raw: RawNative,
  turnId: TurnId | undefined
): Array<EventDraft> => {
  const resolved = (resolution: RequestResolution, optionId?: OptionId): EventDraft => ({
    type: "request.resolved",
    ...withTurn(turnId),
    raw,
    payload: { requestId: p.requestId, resolution, ...definedFields({ optionId }) }
  })
  const prompt = (
    resolution: PromptResolutionKind,
    answers: ReadonlyArray<UserInputAnswerEntry>,
    reason?: string
  ): EventDraft | undefined =>
    p.wire === "question"
      ? {
          type: "user-input.resolved",
          ...withTurn(turnId),
          raw,
          payload: { promptId: p.prompt.promptId, resolution, answers: [...answers], ...definedFields({ reason }) }
        }
      : undefined
  const decision = (
    planId: PlanId | undefined,
    decision: "approved" | "rejected",
    feedback?: string
  ): Array<EventDraft> =>
    planId === undefined || turnId === undefined
      ? []
      : [{ type: "plan.decision", turnId, raw, payload: { planId, decision, ...definedFields({ feedback }) } }]
  const only = (...drafts: ReadonlyArray<EventDraft | undefined>): Array<EventDraft> =>
    drafts.filter((d): d is EventDraft => d !== undefined)

  const result = reply !== undefined && "result" in reply ? reply.result : undefined
  if (forced !== undefined || result === undefined) {
    const resolution = forced ?? "cancelled"
    return only(prompt(resolution, []), resolved(resolution))
  }
  switch (p.wire) {
    case "permission": {
      const exit = decodePermissionResponse(result)
      if (Exit.isFailure(exit)) return only(resolved("responded"))
      const outcome = exit.value.outcome
      if (outcome.outcome === "cancelled") return only(resolved("cancelled"))
      const chosen = p.options.find((o) => o.optionId === outcome.optionId)
      const approved = chosen !== undefined && chosen.kind.startsWith("allow")
      return [
        ...decision(p.planId, approved ? "approved" : "rejected"),
        resolved("responded", OptionId.make(outcome.optionId))
      ]
    }
    case "question": {
      const outcome = p.handler.decodeResponse(result, p.request)
      if (outcome === undefined || outcome.outcome === "cancelled")
        return only(prompt("cancelled", []), resolved("cancelled"))
      if (outcome.outcome === "skipped") return only(prompt("empty", [], outcome.reason), resolved("responded"))
      const entries = outcome.answers.map((a): UserInputAnswerEntry => ({
        questionId: QuestionId.make(a.questionId),
        ...(a.selectedOptionIds.length > 0 || a.text === undefined
          ? { selectedOptionIds: a.selectedOptionIds.map((o) => OptionId.make(o)) }
          : {}),
        ...definedFields({ text: a.text })
      }))
      return only(prompt("answered", redactAnswerEntries(p.prompt, entries)), resolved("responded"))
    }
    case "plan": {
      const outcome = p.handler.decodeResponse(result)
      if (outcome === undefined || outcome.outcome === "cancelled") return only(resolved("cancelled"))
      if (outcome.outcome === "accepted") return [...decision(p.planId, "approved"), resolved("responded", PLAN_ACCEPT)]
      return [...decision(p.planId, "rejected", outcome.reason), resolved("responded", PLAN_REJECT)]
    }
  }
}
