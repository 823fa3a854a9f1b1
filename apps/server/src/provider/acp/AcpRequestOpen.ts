import {
  OptionId,
  PlanId,
  type RequestId,
  UserInputPrompt,
  urlPrompt,
  type ItemId,
  type RawNative,
  type RequestOption,
  type TurnId
} from "@planbridge/contracts"
import { Exit, Schema } from "effect"
import { asJson, rawOf, warningDraft, type EventDraft } from "../kernel/EventDraft.ts"
import { promptIdOf, requestIdOf } from "../kernel/ids.ts"
import { jsonRpcIdKey, type JsonRpcId } from "../kernel/jsonRpcId.ts"
import { withOpened, type OpenRequest } from "../kernel/OpenRequests.ts"
import { questionOpened } from "../kernel/RequestDrafts.ts"
import { definedFields } from "../../util/definedFields.ts"
import { elicitationForm } from "./AcpElicitation.ts"
import * as N from "./AcpNative.ts"
import type { Reply } from "./AcpNative.ts"
import type { PlanHandler, QuestionHandler, QuestionRequest } from "./AcpProfile.ts"
import { decode, pendingFlags, stateDraft, type AcpState, type Mapped, type ProposedPlanRef } from "./AcpState.ts"
import { toolItemId } from "./AcpTurnItems.ts"
import { todosUpdate } from "./AcpUpdates.ts"

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
  readonly requestId: RequestId
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

/**
 * Agent requests that wait for a person (permissions, questions, proposed plans), opened pure:
 * the pending request and its events, or, when it cannot be shown, the reply that answers it
 * at once. Its canonical request, prompt and plan ids are derived from the JSON-RPC id the
 * answer must go to (and the tool-call id), so that a replayed transcript yields the same ids.
 */

export type Opened =
  | {
      readonly pending: Pending
      readonly drafts: ReadonlyArray<EventDraft>
      /** The plan this request proposes or reviews. */
      readonly proposed?: ProposedPlanRef
    }
  | { readonly reply: Reply; readonly drafts: ReadonlyArray<EventDraft> }

/** The agent request being opened: where its answer goes, and what it came with. */
export interface Asked {
  readonly idPrefix: string
  readonly id: JsonRpcId
  readonly method: string
  readonly params: unknown
  readonly raw: RawNative
  readonly turnId: TurnId | undefined
}

/** Option ids Planbridge shows for a Cursor-style plan request (its wire has no options). */
export const PLAN_ACCEPT = OptionId.make("accept")
export const PLAN_REJECT = OptionId.make("reject")

const native = (a: Asked) => ({ method: a.method, id: a.id })
const decodePrompt = Schema.decodeUnknownExit(UserInputPrompt)

const optionKind = (kind: string): NonNullable<RequestOption["kind"]> =>
  kind === "allow_once" || kind === "allow_always" || kind === "reject_once" || kind === "reject_always"
    ? kind
    : "other"

const base = (a: Asked) => ({
  key: jsonRpcIdKey(a.id),
  nativeId: a.id,
  method: a.method,
  requestId: requestIdOf(a.idPrefix, String(a.id)),
  turnId: a.turnId,
  blocking: false,
  answered: false
})

/** A request nobody can be shown, answered at once with `result` so that the agent does not stall. */
const unshowable = (a: Asked, why: string, result: unknown): Opened => ({
  drafts: [
    {
      type: "runtime.warning",
      raw: a.raw,
      payload: { code: "request_invalid", message: `${a.method} cannot be shown: ${why}`, detail: asJson(a.params) }
    }
  ],
  reply: { result }
})

/** What the session already knows of a permission request's tool call. */
export interface PermissionContext {
  /** The item of the tool call it names, announced earlier in the turn. */
  readonly itemId: ItemId | undefined
  /** The tool call's input as its updates left it (claude-agent-acp 0.101 sends the plan there, not in the request). */
  readonly toolInput: unknown
  /** The plan the turn proposed last (`plan_update`): a plan review of the same text is its review. */
  readonly proposed: ProposedPlanRef | undefined
}

const planOf = (input: unknown): string | undefined =>
  typeof input === "object" && input !== null && typeof (input as { plan?: unknown }).plan === "string"
    ? (input as { plan: string }).plan
    : undefined

export const openPermission = (a: Asked, request: N.RequestPermission, context: PermissionContext): Opened => {
  const { raw, turnId } = a
  const tool = request.toolCall
  // A plan review (claude-agent-acp's ExitPlanMode, codex-acp's "Implement this plan?") is a
  // switch_mode tool call whose input carries the plan.
  const isPlan = tool.kind === "switch_mode"
  const planText = planOf(tool.rawInput) ?? N.toolCallText(tool.content) ?? planOf(context.toolInput)
  const proposed = context.proposed
  const linked =
    isPlan &&
    proposed !== undefined &&
    proposed.turnId === turnId &&
    (planText === undefined || planText === proposed.markdown)
      ? proposed
      : undefined
  const planId = linked?.planId ?? (isPlan ? PlanId.make(`${a.idPrefix}:plan:${tool.toolCallId}`) : undefined)
  const kind = isPlan ? "plan" : "approval"
  const pending: Pending = { wire: "permission", kind, ...base(a), options: request.options, planId }
  const drafts: Array<EventDraft> = []
  if (linked === undefined && planId !== undefined && planText !== undefined && turnId !== undefined) {
    drafts.push({ type: "plan.proposed.completed", turnId, raw, payload: { planId, markdown: planText } })
  }
  const detail = N.toolCallText(tool.content)
  drafts.push({
    type: "request.opened",
    ...definedFields({ turnId }),
    ...definedFields({ itemId: context.itemId }),
    raw,
    payload: {
      requestId: pending.requestId,
      requestKind: isPlan ? "plan_approval" : "approval",
      ...(typeof tool.title === "string" ? { title: tool.title } : {}),
      ...definedFields({ detail }),
      options: request.options.map((o) => ({ id: OptionId.make(o.optionId), label: o.name, kind: optionKind(o.kind) })),
      native: native(a),
      ...definedFields({ planId })
    }
  })
  const nowProposed =
    planId !== undefined && turnId !== undefined && planText !== undefined
      ? { planId, markdown: planText, turnId }
      : undefined
  return { pending, drafts, ...definedFields({ proposed: nowProposed }) }
}

export const openQuestion = (a: Asked, handler: QuestionHandler): Opened => {
  const { raw, turnId } = a
  const decoded = handler.decode(a.params)
  const promptId = promptIdOf(a.idPrefix, String(a.id))
  const url = decoded.ok ? decoded.value.url : undefined
  const promptExit = !decoded.ok
    ? undefined
    : url !== undefined
      ? decodePrompt(urlPrompt({ promptId, message: decoded.value.title ?? "", url }))
      : decodePrompt({
          promptId,
          ...definedFields({ title: decoded.value.title }),
          ...definedFields({ description: decoded.value.description }),
          questions: decoded.value.questions.map((q) => ({
            id: q.id,
            label: q.label,
            ...definedFields({ header: q.header }),
            ...definedFields({ description: q.description }),
            options: q.options.map((o) => ({
              id: o.id,
              label: o.label,
              ...definedFields({ description: o.description })
            })),
            multiSelect: q.multiSelect,
            allowFreeform: q.allowFreeform,
            secret: false,
            required: q.required
          })),
          source: "native",
          blocking: true
        })
  if (!decoded.ok || promptExit === undefined || Exit.isFailure(promptExit)) {
    const why = !decoded.ok
      ? decoded.error
      : promptExit !== undefined && Exit.isFailure(promptExit)
        ? String(promptExit.cause)
        : "no prompt"
    const skipped = { outcome: "skipped", reason: "the question could not be displayed" } as const
    return unshowable(a, why, handler.encode(skipped, { toolCallId: undefined, title: undefined, questions: [] }))
  }
  const prompt = promptExit.value
  const question = { wire: "question", kind: "prompt", promptId: prompt.promptId, blocking: true } as const
  const pending: Pending = { ...base(a), ...question, prompt, handler, request: decoded.value }
  const drafts = questionOpened(definedFields({ turnId }), raw, pending.requestId, prompt, native(a), {
    title: prompt.title
  })
  return { pending, drafts }
}

export const openPlan = (a: Asked, handler: PlanHandler): Opened => {
  const { raw, turnId } = a
  const decoded = handler.decode(a.params)
  if (!decoded.ok || turnId === undefined)
    return unshowable(
      a,
      decoded.ok ? "it arrived outside a turn" : decoded.error,
      handler.encode({ outcome: "cancelled" })
    )
  const planId = PlanId.make(`${a.idPrefix}:plan:${decoded.value.toolCallId ?? a.id}`)
  const pending: Pending = { wire: "plan", kind: "plan", ...base(a), turnId, planId, handler }
  const title = decoded.value.title
  const options = [
    { id: PLAN_ACCEPT, label: "Accept plan", kind: "allow_once" as const },
    { id: PLAN_REJECT, label: "Reject plan", kind: "reject_once" as const }
  ]
  const payload = { planId, markdown: decoded.value.markdown, ...definedFields({ title }) }
  return {
    pending,
    drafts: [
      { type: "plan.proposed.completed", turnId, raw, payload },
      {
        type: "request.opened",
        turnId,
        raw,
        payload: {
          requestId: pending.requestId,
          requestKind: "plan_approval",
          ...definedFields({ title }),
          options,
          native: native(a),
          planId
        }
      }
    ]
  }
}

/** An agent request: opened (the session waits on it), or answered at once with `reply`. */
export const agentRequest = (
  s: AcpState,
  id: JsonRpcId,
  method: string,
  params: unknown
): Mapped & { readonly reply?: Reply } => {
  const raw = rawOf("acp.request", method, params)
  const asked = (turnId = s.turnId): Asked => ({ idPrefix: s.idPrefix, id, method, params, raw, turnId })
  const refuse = (code: string, message: string, rpcCode: number) => ({
    state: s,
    drafts: [warningDraft(code, message, raw, { method, params })],
    reply: { error: { code: rpcCode, message: rpcCode === -32601 ? `Method not found: ${method}` : message } }
  })
  if (method === "session/request_permission") {
    const decoded = decode(N.RequestPermission, params)
    if (decoded === undefined) return refuse("request_invalid", "session/request_permission did not decode", -32602)
    const toolCallId = decoded.toolCall.toolCallId
    const itemId = toolItemId(s.items, toolCallId, s.turnId)
    const toolInput = itemId === undefined ? undefined : s.items.tools.get(toolCallId)?.fields.rawInput
    return waiting(
      s,
      openPermission(asked(s.turnId ?? s.lastTurnId), decoded, { itemId, toolInput, proposed: s.proposed })
    )
  }
  const handler = method === "elicitation/create" ? elicitationForm : s.profile.extensionRequests[method]
  if (handler === undefined) return refuse("unknown_request", `unsupported agent request ${method}`, -32601)
  if (handler.kind === "todos") return todosUpdate(s, handler, params, raw)
  return waiting(
    s,
    handler.kind === "question" ? openQuestion(asked(), handler) : openPlan(asked(s.turnId ?? s.lastTurnId), handler)
  )
}

const withPending = (s: AcpState, p: Pending): AcpState => ({ ...s, pending: withOpened(s.pending, p) })

/** An opened request makes the session wait on it; one that cannot be shown is answered now. */
const waiting = (s: AcpState, opened: Opened): Mapped & { readonly reply?: Reply } => {
  if ("reply" in opened) return { state: s, drafts: opened.drafts, reply: opened.reply }
  const state = withPending(opened.proposed === undefined ? s : { ...s, proposed: opened.proposed }, opened.pending)
  const raw = opened.drafts[0]?.raw ?? rawOf("planbridge", undefined, null)
  return { state, drafts: [...opened.drafts, stateDraft("waiting", pendingFlags(state), raw)] }
}
