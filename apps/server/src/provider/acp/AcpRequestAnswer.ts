import { OptionId, type RequestId } from "@planbridge/contracts"
import type { CheckedAnswer } from "../kernel/CheckedAnswer.ts"
import type { JsonRpcId } from "../kernel/jsonRpcId.ts"
import { adapterError, type AdapterError, type AdapterErrorKind, type PlanDecisionInput } from "../ProviderAdapter.ts"
import { definedFields } from "../../util/definedFields.ts"
import type { Pending, PermissionPending, PlanPending, QuestionPending } from "./AcpRequestOpen.ts"

/**
 * A request's life, second step: the answer. What a person decided (or a cancel) becomes our
 * reply in the agent's native form, or a typed refusal; nothing here changes state. The session
 * records the reply's resolution (`AcpRequestResolve.ts`) before it writes the reply.
 */

export type Reply =
  | { readonly result: unknown }
  | { readonly error: { readonly code: number; readonly message: string; readonly data?: unknown } }

/** Our answer to an agent request as the JSON-RPC message written. */
export const replyMessage = (id: JsonRpcId | null, reply: Reply) => ({
  jsonrpc: "2.0" as const,
  id,
  ...("result" in reply ? { result: reply.result } : { error: reply.error })
})

/** Option ids Planbridge shows for a Cursor-style plan request (its wire has no options). */
export const PLAN_ACCEPT = OptionId.make("accept")
export const PLAN_REJECT = OptionId.make("reject")

/** The reply that cancels a request nobody answered. */
export const cancelReply = (p: Pending): Reply => {
  if (p.wire === "permission") return { result: { outcome: { outcome: "cancelled" } } }
  return p.wire === "question"
    ? { result: p.handler.encode({ outcome: "cancelled" }, p.request) }
    : { result: p.handler.encode({ outcome: "cancelled" }) }
}

const refuse = (kind: AdapterErrorKind, message: string) => adapterError(kind, message)

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
