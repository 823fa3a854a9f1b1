import type { TurnId } from "@planbridge/contracts"
import { Effect } from "effect"
import { makeAnswers, type NativeReplies } from "../kernel/Answers.ts"
import { fieldAnswers } from "../kernel/CheckedAnswer.ts"
import { isJsonRpcId, jsonRpcIdKey, type JsonRpcId } from "../kernel/jsonRpcId.ts"
import type { Session } from "../kernel/Session.ts"
import type { TranscriptEntry } from "../kernel/transcript.ts"
import { type AdapterError, adapterError, type PlanDecisionInput } from "../ProviderAdapter.ts"
import { definedFields } from "../../util/definedFields.ts"
import { isRecord, type Reply } from "./AcpNative.ts"
import { PLAN_ACCEPT, PLAN_REJECT, type Pending, type PermissionPending, type PlanPending } from "./AcpRequestOpen.ts"
import type { AcpState } from "./AcpState.ts"

/**
 * A request's life, second step: the answer. What a person decided (or a cancel) becomes our
 * reply in the agent's native form, or a typed refusal (pure, below); `makeAcpAnswers` maps that
 * reply as a line of ours, so that its resolution (`AcpRequestResolve.ts`) is recorded, and only
 * then writes it to the agent.
 */

/** A reply of ours as the JSON-RPC message written (`null` id: to a line that was no request). */
export const replyMessage = (id: JsonRpcId | null, reply: Reply) => ({
  jsonrpc: "2.0" as const,
  id,
  ...("result" in reply ? { result: reply.result } : { error: reply.error })
})

/** The reply that cancels a request nobody answered. */
export const cancelReply = (p: Pending): Reply => {
  const cancelled = { outcome: "cancelled" } as const
  if (p.wire === "permission") return { result: { outcome: cancelled } }
  return { result: p.wire === "question" ? p.handler.encode(cancelled, p.request) : p.handler.encode(cancelled) }
}

/** ACP's replies to the agent's open requests (kernel `Answers.ts`), in the agent's native forms. */
const acpReplies = (agentLabel: string): NativeReplies<Pending, Reply> => ({
  answer: (p, checked) => {
    const answers = fieldAnswers(checked)
    // Checked against its prompt already; the profile may refuse more.
    const refused = p.handler.check?.(answers, p.request)
    if (refused !== undefined) return adapterError("invalid_answer", refused)
    return { result: p.handler.encode({ outcome: "answered", answers }, p.request) }
  },
  dismiss: (p, resolution) => ({
    result: p.handler.encode({ outcome: resolution === "empty" ? "skipped" : "cancelled" }, p.request)
  }),
  /** An option chosen on a permission or plan request. */
  choose: (p, optionId) => {
    if (p.wire === "question")
      return adapterError("invalid_answer", `request ${p.requestId} carries questions: answer the prompt instead`)
    if (p.wire === "plan") {
      if (optionId !== PLAN_ACCEPT && optionId !== PLAN_REJECT)
        return adapterError("invalid_answer", `plan requests take '${PLAN_ACCEPT}' or '${PLAN_REJECT}'`)
      return { result: p.handler.encode({ outcome: optionId === PLAN_ACCEPT ? "accepted" : "rejected" }) }
    }
    if (!p.options.some((o) => o.optionId === optionId))
      return adapterError("invalid_answer", `request ${p.requestId} has no option '${optionId}'`)
    return { result: { outcome: { outcome: "selected", optionId } } }
  },
  decidePlan: (p, decision) => planReply(p, decision, agentLabel)
})

/** A decision on a proposed plan: a plan request's own answer, or a permission option. */
export const planReply = (
  p: PermissionPending | PlanPending,
  decision: PlanDecisionInput,
  agentLabel: string
): Reply | AdapterError => {
  if (decision.decision === "edited") return adapterError("unsupported", `${agentLabel} cannot take an edited plan`)
  const approved = decision.decision === "approved"
  if (p.wire === "plan") {
    const chosen = approved ? PLAN_ACCEPT : PLAN_REJECT
    if (decision.optionId !== undefined && decision.optionId !== chosen)
      return adapterError("invalid_answer", `a ${decision.decision} plan takes option '${chosen}'`)
    const outcome = approved
      ? ({ outcome: "accepted" } as const)
      : ({ outcome: "rejected", ...definedFields({ reason: decision.feedback }) } as const)
    return { result: p.handler.encode(outcome) }
  }
  // A permission request has nowhere to carry feedback; refuse rather than drop it.
  if (decision.feedback !== undefined)
    return adapterError("unsupported", `${agentLabel} cannot pass plan feedback to the model`)
  const wanted = approved ? ["allow_once", "allow_always"] : ["reject_once", "reject_always"]
  // One of the agent's own review choices, when the client picked one: it must say the same.
  const option =
    decision.optionId !== undefined
      ? p.options.find((o) => o.optionId === decision.optionId)
      : wanted.map((kind) => p.options.find((o) => o.kind === kind)).find((o) => o !== undefined)
  if (decision.optionId !== undefined && option === undefined)
    return adapterError("invalid_answer", `the plan request has no option '${decision.optionId}'`)
  if (option === undefined)
    return adapterError("unsupported", `the plan request offers no ${approved ? "approve" : "reject"} option`)
  if (!wanted.includes(option.kind))
    return adapterError(
      "invalid_answer",
      `option '${option.optionId}' (${option.kind}) does not ${approved ? "approve" : "reject"} the plan`
    )
  return { result: { outcome: { outcome: "selected", optionId: option.optionId } } }
}

/**
 * A session's answers to the agent's open requests, on its runner: each is mapped (its
 * resolution recorded) first, then written with `write`.
 */
export const makeAcpAnswers = (
  session: Session<AcpState, TranscriptEntry>,
  write: (msg: unknown) => Effect.Effect<void, AdapterError>,
  agentLabel: string
) => {
  const open = () => session.peek().pending
  /** Strict (a person's answer): if its resolution cannot be recorded, nothing is sent and `p` stays pending. */
  const answer = (p: Pending, reply: Reply, strict = true) => {
    const msg = replyMessage(p.nativeId, reply)
    return session.answer(p, { dir: "out", msg }, { strict, write: Effect.ignore(write(msg)) })
  }
  return {
    ...makeAnswers(Effect.sync(open), answer, acpReplies(agentLabel)),
    /** After `session/cancel`: ACP leaves the agent's open requests of `turnId` to the client to cancel. */
    cancelInTurn: (turnId: TurnId) =>
      Effect.suspend(() =>
        Effect.forEach(
          [...open().values()].filter((p) => p.turnId === turnId || p.turnId === undefined),
          // One that ended meanwhile (answered, withdrawn) needs nothing.
          (p) =>
            answer(p, cancelReply(p)).pipe(
              Effect.catchIf(
                (e) => e.reason._tag === "RequestNotPending" || e.reason._tag === "PromptNotPending",
                () => Effect.void
              )
            ),
          { discard: true }
        )
      ),
    /**
     * Agent requests whose events could not be recorded (`lines`, what `applyAll` gives): nobody
     * can see them, so each still open is cancelled (an answer of ours, a line like any other).
     */
    cancelUnseen: (lines: ReadonlyArray<TranscriptEntry>) =>
      Effect.forEach(
        lines,
        (line) => {
          const { dir, msg } = line
          const id = dir === "in" && isRecord(msg) && typeof msg.method === "string" ? msg.id : undefined
          const p = isJsonRpcId(id) ? open().get(jsonRpcIdKey(id)) : undefined
          return p === undefined ? Effect.void : Effect.ignore(answer(p, cancelReply(p), false))
        },
        { discard: true }
      )
  }
}
