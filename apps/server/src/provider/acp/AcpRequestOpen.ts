import {
  OptionId,
  PlanId,
  UserInputPrompt,
  urlPrompt,
  type ItemId,
  type RawNative,
  RequestOption,
  type TurnId
} from "@planbridge/contracts"
import { Exit, Result, Schema } from "effect"
import { asJson, rawOf, warningDraft, type EventDraft } from "../kernel/EventDraft.ts"
import { promptIdOf, requestIdOf } from "../kernel/ids.ts"
import { jsonRpcIdKey, type JsonRpcId } from "../kernel/jsonRpcId.ts"
import { withOpened, type OpenRequest } from "../kernel/OpenRequests.ts"
import { approvalOpened, questionOpened, type ApprovalCard } from "../kernel/RequestDrafts.ts"
import { fieldQuestions } from "../kernel/ElicitationForm.ts"
import { definedFields } from "../../util/definedFields.ts"
import { elicitationForm } from "./AcpElicitation.ts"
import * as N from "./AcpNative.ts"
import type { PlanHandler, QuestionHandler, QuestionRequest } from "./AcpProfile.ts"
import type { AcpState, Mapped } from "./AcpState.ts"
import { todosUpdate } from "./AcpUpdates.ts"
import { decodedOr, sessionStateDraft } from "../kernel/Mapped.ts"

/**
 * A request's life, first step: the agent asks. Its request (a permission, a question, a
 * proposed plan) is opened pure as one of the kernel's open requests (`OpenRequests.ts`, keyed
 * by the JSON-RPC id key) with how the agent asked (`wire`) and what its answer needs, and the
 * session waits on it; the answer is `AcpRequestAnswer.ts`, its end `AcpRequestResolve.ts`. ACP
 * closes a request when our answer is written, so `answered` stays false (but for an opened URL).
 */

interface PendingBase extends OpenRequest {
  readonly nativeId: JsonRpcId
  readonly method: string
  readonly turnId: TurnId | undefined
}
export interface PermissionPending extends PendingBase {
  readonly wire: "permission"
  /** `plan` for ExitPlanMode (a `switch_mode` tool call), whose decision is the plan's. */
  readonly kind: "approval" | "plan"
  readonly options: ReadonlyArray<N.PermissionOption>
  readonly planId: PlanId | undefined
}
export interface QuestionPending extends PendingBase {
  readonly wire: "question"
  readonly kind: "prompt"
  readonly prompt: UserInputPrompt
  readonly handler: QuestionHandler
  readonly request: QuestionRequest
}
export interface PlanPending extends PendingBase {
  readonly wire: "plan"
  readonly kind: "plan"
  readonly planId: PlanId
  readonly handler: PlanHandler
}
export type Pending = PermissionPending | QuestionPending | PlanPending

/** What the open requests wait on, as `session.state.changed` flags. */
export const pendingFlags = (s: AcpState): ReadonlyArray<string> => {
  // An opened URL prompt (answered, awaiting the agent's completion) waits on nobody here.
  const kinds = [...s.pending.values()]
    .filter((p) => !p.answered)
    .map((p) => (p.kind === "prompt" ? "waitingOnUserInput" : "waitingOnApproval"))
  return [...new Set(kinds)].sort()
}

/** Option ids Planbridge shows for a Cursor-style plan request (its wire has no options). */
export const PLAN_ACCEPT = OptionId.make("accept")
export const PLAN_REJECT = OptionId.make("reject")

/**
 * Agent requests that wait for a person (permissions, questions, proposed plans), opened pure:
 * the pending request and its events, or, when it cannot be shown, the reply that answers it
 * at once. Its canonical request, prompt and plan ids are derived from the JSON-RPC id the
 * answer must go to (and the tool-call id), so that a replayed transcript yields the same ids.
 */
type Asked = Mapped & { readonly reply?: N.Reply }

/** The agent request being opened: the session, where its answer goes, and what it came with. */
interface Ask {
  readonly s: AcpState
  readonly id: JsonRpcId
  readonly method: string
  readonly params: unknown
  readonly raw: RawNative
  readonly turnId: TurnId | undefined
}

/** An option kind the contracts know (`allow_once`, …); any other is `other`. */
const isOptionKind = Schema.is(RequestOption.fields.kind.schema)

const base = (a: Ask) => ({
  key: jsonRpcIdKey(a.id),
  nativeId: a.id,
  method: a.method,
  requestId: requestIdOf(a.s.idPrefix, String(a.id)),
  turnId: a.turnId,
  blocking: false,
  answered: false
})

/** A request nobody can be shown, answered at once with `result` so that the agent does not stall. */
const unshowable = (a: Ask, why: string, result: unknown): Asked => {
  const message = `${a.method} cannot be shown: ${why}`
  return { state: a.s, drafts: [warningDraft("request_invalid", message, a.raw, asJson(a.params))], reply: { result } }
}

/** An opened request makes the session wait on it (and, for a plan, is the plan proposed last). */
const waiting = (a: Ask, pending: Pending, drafts: ReadonlyArray<EventDraft>, proposed = a.s.proposed): Asked => {
  const state = { ...a.s, proposed, pending: withOpened(a.s.pending, pending) }
  return { state, drafts: [...drafts, sessionStateDraft("waiting", pendingFlags(state), a.raw)] }
}

/** `request.opened` for a permission or a plan (a question's is the kernel's `questionOpened`). */
const requestOpened = (a: Ask, p: Pending, card: ApprovalCard, itemId?: ItemId): EventDraft =>
  approvalOpened(definedFields({ turnId: a.turnId, itemId }), a.raw, p.requestId, { method: a.method, id: a.id }, card)

/** A switch_mode tool call's input, as far as it carries a plan. */
const decodePlanInput = Schema.decodeUnknownResult(Schema.Struct({ plan: Schema.String }))
const planOf = (input: unknown): string | undefined => Result.getOrUndefined(decodePlanInput(input))?.plan

const openPermission = (a: Ask, request: N.RequestPermission): Asked => {
  const { s, raw, turnId } = a
  const tool = request.toolCall
  // The tool call it names, announced earlier in the turn, and its input as its updates left it
  // (claude-agent-acp 0.101 sends the plan there, not in the request).
  const known = s.items.tools.get(tool.toolCallId)
  const item = known?.turnId === s.turnId ? known : undefined
  // A plan review (claude-agent-acp's ExitPlanMode, codex-acp's "Implement this plan?") is a
  // switch_mode tool call whose input carries the plan; one of the plan the turn proposed last
  // (`plan_update`) is that plan's review.
  const isPlan = tool.kind === "switch_mode"
  const planText = planOf(tool.rawInput) ?? N.toolCallText(tool.content) ?? planOf(item?.fields.rawInput)
  const last = s.proposed
  const linked =
    isPlan && last !== undefined && last.turnId === turnId && (planText === undefined || planText === last.markdown)
      ? last
      : undefined
  const planId = linked?.planId ?? (isPlan ? PlanId.make(`${s.idPrefix}:plan:${tool.toolCallId}`) : undefined)
  const pending: Pending = {
    wire: "permission",
    kind: isPlan ? "plan" : "approval",
    ...base(a),
    options: request.options,
    planId
  }
  const proposed = planId !== undefined && turnId !== undefined && planText !== undefined
  const drafts: Array<EventDraft> = []
  if (linked === undefined && proposed)
    drafts.push({ type: "plan.proposed.completed", turnId, raw, payload: { planId, markdown: planText } })
  const options = request.options.map((o) => ({
    id: OptionId.make(o.optionId),
    label: o.name,
    kind: isOptionKind(o.kind) ? o.kind : "other"
  }))
  const card = { options, title: tool.title ?? undefined, detail: N.toolCallText(tool.content), planId }
  drafts.push(requestOpened(a, pending, { requestKind: isPlan ? "plan_approval" : "approval", ...card }, item?.itemId))
  return waiting(a, pending, drafts, proposed ? { planId, markdown: planText, turnId } : s.proposed)
}

const decodePrompt = Schema.decodeUnknownExit(UserInputPrompt)

const openQuestion = (a: Ask, handler: QuestionHandler): Asked => {
  const decoded = handler.decode(a.params)
  const skipped = () =>
    handler.encode(
      { outcome: "skipped", reason: "the question could not be displayed" },
      { title: undefined, questions: [] }
    )
  if (Result.isFailure(decoded)) return unshowable(a, decoded.failure.message, skipped())
  const request = decoded.success
  const promptId = promptIdOf(a.s.idPrefix, String(a.id))
  const promptExit = decodePrompt(
    request.url !== undefined
      ? urlPrompt({ promptId, message: request.title ?? "", url: request.url })
      : {
          promptId,
          ...definedFields({ title: request.title, description: request.description }),
          questions: fieldQuestions(request.questions),
          source: "native",
          blocking: true
        }
  )
  if (Exit.isFailure(promptExit)) return unshowable(a, String(promptExit.cause), skipped())
  const prompt = promptExit.value
  const question = { wire: "question", kind: "prompt", promptId: prompt.promptId, blocking: true } as const
  const pending: Pending = { ...base(a), ...question, prompt, handler, request }
  const at = definedFields({ turnId: a.turnId })
  return waiting(
    a,
    pending,
    questionOpened(at, a.raw, pending.requestId, prompt, { method: a.method, id: a.id }, { title: prompt.title })
  )
}

const planOptions = [
  { id: PLAN_ACCEPT, label: "Accept plan", kind: "allow_once" as const },
  { id: PLAN_REJECT, label: "Reject plan", kind: "reject_once" as const }
]

const openPlan = (a: Ask, handler: PlanHandler): Asked => {
  const { raw, turnId } = a
  const decoded = handler.decode(a.params)
  if (Result.isFailure(decoded) || turnId === undefined) {
    const why = Result.isFailure(decoded) ? decoded.failure.message : "it arrived outside a turn"
    return unshowable(a, why, handler.encode({ outcome: "cancelled" }))
  }
  const { title, markdown, toolCallId } = decoded.success
  const planId = PlanId.make(`${a.s.idPrefix}:plan:${toolCallId ?? a.id}`)
  const pending: Pending = { wire: "plan", kind: "plan", ...base(a), turnId, planId, handler }
  return waiting(a, pending, [
    { type: "plan.proposed.completed", turnId, raw, payload: { planId, markdown, ...definedFields({ title }) } },
    requestOpened(a, pending, { requestKind: "plan_approval", options: planOptions, title, planId })
  ])
}

/** An agent request: opened (the session waits on it), or answered at once with `reply`. */
export const agentRequest = (s: AcpState, id: JsonRpcId, method: string, params: unknown): Asked => {
  const raw = rawOf("acp.request", method, params)
  const ask = (turnId = s.turnId): Ask => ({ s, id, method, params, raw, turnId })
  const refuse = (code: string, message: string, rpcCode: number) => ({
    state: s,
    drafts: [warningDraft(code, message, raw, { method, params })],
    reply: { error: { code: rpcCode, message: rpcCode === -32601 ? `Method not found: ${method}` : message } }
  })
  if (method === "session/request_permission") {
    const invalid = (): Asked => refuse("request_invalid", "session/request_permission did not decode", -32602)
    return decodedOr(N.RequestPermission, invalid)(params, (r) => openPermission(ask(s.turnId ?? s.lastTurnId), r))
  }
  const handler = method === "elicitation/create" ? elicitationForm : s.profile.extensionRequests?.[method]
  if (handler === undefined) return refuse("unknown_request", `unsupported agent request ${method}`, -32601)
  if (handler.kind === "todos") return todosUpdate(s, handler, params, raw)
  return handler.kind === "question" ? openQuestion(ask(), handler) : openPlan(ask(s.turnId ?? s.lastTurnId), handler)
}
