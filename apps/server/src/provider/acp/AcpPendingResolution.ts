import {
  OptionId,
  QuestionId,
  type RequestId,
  redactAnswerEntries,
  type PlanId,
  type PromptResolutionKind,
  type RawNative,
  type RequestResolution,
  type TurnId,
  type UserInputAnswerEntry
} from "@planbridge/contracts"
import { Exit, Schema } from "effect"
import type { CheckedAnswer } from "../kernel/CheckedAnswer.ts"
import type { EventDraft } from "../kernel/EventDraft.ts"
import { promptResolved, requestResolved } from "../kernel/RequestDrafts.ts"
import { AdapterError, type PlanDecisionInput } from "../ProviderAdapter.ts"
import * as N from "./AcpNative.ts"
import { PLAN_ACCEPT, PLAN_REJECT, withTurn, type Pending, type Reply } from "./AcpPending.ts"
import type { PermissionPending, PlanPending, QuestionPending } from "./AcpPending.ts"
import { definedFields } from "../../util/definedFields.ts"

/**
 * How a pending agent request ends, pure: our reply (a person's decision, in the agent's native
 * form, or why it cannot be given; a cancel) and the resolution events. The session records
 * the resolution, then writes the reply.
 */

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
  const at = withTurn(turnId)
  const resolved = (resolution: RequestResolution, optionId?: OptionId) =>
    requestResolved(at, raw, p.requestId, resolution, optionId)
  const prompt = (resolution: PromptResolutionKind, answers: ReadonlyArray<UserInputAnswerEntry>, reason?: string) =>
    p.wire === "question" ? promptResolved(at, raw, p.prompt.promptId, resolution, answers, reason) : undefined
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
  // Answered already (an opened URL prompt): its request was resolved then; only the prompt is left.
  if (p.answered) return only(prompt(forced ?? "cancelled", []))
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

const refuse = (reason: AdapterError["reason"], message: string) => new AdapterError({ reason, message })

/** An option chosen on a permission or plan request. */
export const requestReply = (p: Pending, requestId: RequestId, optionId: OptionId): Reply | AdapterError => {
  if (p.wire === "question")
    return refuse("invalid_answer", `request ${requestId} carries questions: answer the prompt instead`)
  if (p.wire === "plan") {
    if (optionId !== PLAN_ACCEPT && optionId !== PLAN_REJECT)
      return refuse("invalid_answer", `plan requests take '${PLAN_ACCEPT}' or '${PLAN_REJECT}'`)
    return { result: p.handler.encode({ outcome: optionId === PLAN_ACCEPT ? "accepted" : "rejected" }) }
  }
  if (!p.options.some((o) => o.optionId === optionId))
    return refuse("invalid_answer", `request ${requestId} has no option '${optionId}'`)
  return { result: { outcome: { outcome: "selected", optionId } } }
}

/** An answer to a question request (checked against its prompt; the profile may refuse more). */
export const answerReply = (p: QuestionPending, checked: CheckedAnswer): Reply | AdapterError => {
  const answers = checked.entries.map((e) => ({
    questionId: e.question.id,
    selectedOptionIds: e.selected.map((o) => o.id),
    ...definedFields({ text: e.text })
  }))
  const refused = p.handler.check?.(answers, p.request)
  if (refused !== undefined) return refuse("invalid_answer", refused)
  return { result: p.handler.encode({ outcome: "answered", answers }, p.request) }
}

/** A question request resolved without answers. */
export const dismissReply = (p: QuestionPending, resolution: "empty" | "cancelled"): Reply => ({
  result: p.handler.encode(resolution === "empty" ? { outcome: "skipped" } : { outcome: "cancelled" }, p.request)
})

/** A decision on a proposed plan: a plan request's own answer, or a permission option. */
export const planReply = (
  p: PermissionPending | PlanPending,
  decision: PlanDecisionInput,
  agentLabel: string
): Reply | AdapterError => {
  if (decision.decision === "edited") return refuse("unsupported", `${agentLabel} cannot take an edited plan`)
  const approved = decision.decision === "approved"
  if (p.wire === "plan") {
    const chosen = approved ? PLAN_ACCEPT : PLAN_REJECT
    if (decision.optionId !== undefined && decision.optionId !== chosen)
      return refuse("invalid_answer", `a ${decision.decision} plan takes option '${chosen}'`)
    const outcome = approved
      ? ({ outcome: "accepted" } as const)
      : decision.feedback === undefined
        ? ({ outcome: "rejected" } as const)
        : ({ outcome: "rejected", reason: decision.feedback } as const)
    return { result: p.handler.encode(outcome) }
  }
  // A permission request has nowhere to carry feedback; refuse rather than drop it.
  if (decision.feedback !== undefined)
    return refuse("unsupported", `${agentLabel} cannot pass plan feedback to the model`)
  const wanted = approved ? ["allow_once", "allow_always"] : ["reject_once", "reject_always"]
  // One of the agent's own review choices, when the client picked one: it must say the same.
  const option =
    decision.optionId !== undefined
      ? p.options.find((o) => o.optionId === decision.optionId)
      : wanted.map((kind) => p.options.find((o) => o.kind === kind)).find((o) => o !== undefined)
  if (decision.optionId !== undefined && option === undefined)
    return refuse("invalid_answer", `the plan request has no option '${decision.optionId}'`)
  if (option === undefined)
    return refuse("unsupported", `the plan request offers no ${approved ? "approve" : "reject"} option`)
  if (!wanted.includes(option.kind))
    return refuse(
      "invalid_answer",
      `option '${option.optionId}' (${option.kind}) does not ${approved ? "approve" : "reject"} the plan`
    )
  return { result: { outcome: { outcome: "selected", optionId: option.optionId } } }
}
