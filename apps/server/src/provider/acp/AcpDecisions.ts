import type { OptionId, RequestId } from "@planbridge/contracts"
import type { CheckedAnswer } from "../kernel/CheckedAnswer.ts"
import { AdapterError, type PlanDecisionInput } from "../ProviderAdapter.ts"
import type { PermissionPending, PlanPending, QuestionPending, Pending, Reply } from "./AcpPending.ts"
import { PLAN_ACCEPT, PLAN_REJECT } from "./AcpPending.ts"
import { definedFields } from "../../util/definedFields.ts"

/**
 * Our decisions on an ACP agent's pending requests, pure: the native reply each canonical
 * decision becomes, or why it cannot be given. session.ts emits the resolution, then writes it.
 */

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
  const option = wanted.map((kind) => p.options.find((o) => o.kind === kind)).find((o) => o !== undefined)
  if (option === undefined)
    return refuse("unsupported", `the plan request offers no ${approved ? "approve" : "reject"} option`)
  return { result: { outcome: { outcome: "selected", optionId: option.optionId } } }
}
