import {
  OptionId,
  PlanId,
  RequestId,
  UserInputPrompt,
  type ItemId,
  type RawNative,
  type RequestOption,
  type TurnId
} from "@planbridge/contracts"
import { Exit, Schema } from "effect"
import { asJson, type EventDraft } from "../kernel/EventDraft.ts"
import * as N from "./AcpNative.ts"
import type { PlanHandler, QuestionHandler } from "./AcpProfile.ts"
import { definedFields } from "../../util/definedFields.ts"
import { jsonRpcIdKey, type JsonRpcId } from "../kernel/jsonRpcId.ts"

export type { JsonRpcId }
export * from "./AcpPendingTypes.ts"
export { cancelReply, resolutionDrafts } from "./AcpPendingResolution.ts"
import {
  PLAN_ACCEPT,
  PLAN_REJECT,
  withTurn,
  type PermissionPending,
  type Pending,
  type PlanPending,
  type QuestionPending,
  type RequestOutput
} from "./AcpPendingTypes.ts"

const decodePrompt = Schema.decodeUnknownExit(UserInputPrompt)

const optionKind = (kind: string): NonNullable<RequestOption["kind"]> =>
  kind === "allow_once" || kind === "allow_always" || kind === "reject_once" || kind === "reject_always"
    ? kind
    : "other"

/**
 * Agent requests that wait for a person: permissions, questions, proposed plans. Keyed by the
 * JSON-RPC id the answer must go to; the canonical request, prompt and plan ids are derived
 * from it (and the tool-call id) so that a replayed transcript yields the same ids.
 */
export class PendingRequests {
  private readonly byKey = new Map<string, Pending>()

  constructor(private readonly idPrefix: string) {}

  all(): ReadonlyArray<Pending> {
    return [...this.byKey.values()]
  }
  inTurn(turnId: TurnId): ReadonlyArray<Pending> {
    return this.all().filter((p) => p.turnId === turnId)
  }
  take(id: JsonRpcId): Pending | undefined {
    const pending = this.byKey.get(jsonRpcIdKey(id))
    this.byKey.delete(jsonRpcIdKey(id))
    return pending
  }
  restore(pending: Pending): void {
    this.byKey.set(jsonRpcIdKey(pending.nativeId), pending)
  }
  byRequestId(requestId: string): Pending | undefined {
    return this.all().find((p) => p.requestId === requestId)
  }
  byPromptId(promptId: string): QuestionPending | undefined {
    return this.all().find((p): p is QuestionPending => p.kind === "question" && p.prompt.promptId === promptId)
  }
  byPlanId(planId: string): PermissionPending | PlanPending | undefined {
    return this.all().find((p): p is PermissionPending | PlanPending => p.kind !== "question" && p.planId === planId)
  }
  flags(): ReadonlyArray<string> {
    const kinds = new Set(this.all().map((p) => (p.kind === "question" ? "waitingOnUserInput" : "waitingOnApproval")))
    return [...kinds].sort()
  }

  private requestId(id: JsonRpcId): RequestId {
    return RequestId.make(`${this.idPrefix}:request:${id}`)
  }

  openPermission(
    id: JsonRpcId,
    method: string,
    request: N.RequestPermission,
    raw: RawNative,
    turnId: TurnId | undefined,
    itemId: ItemId | undefined
  ): RequestOutput {
    const tool = request.toolCall
    // ExitPlanMode (claude-agent-acp) is a switch_mode tool call whose input carries the plan.
    const isPlan = tool.kind === "switch_mode"
    const planId = isPlan ? PlanId.make(`${this.idPrefix}:plan:${tool.toolCallId}`) : undefined
    const pending: PermissionPending = {
      kind: "permission",
      nativeId: id,
      method,
      requestId: this.requestId(id),
      turnId,
      options: request.options,
      planId
    }
    this.byKey.set(jsonRpcIdKey(id), pending)
    const drafts: Array<EventDraft> = []
    const rawInput = tool.rawInput
    const planText =
      typeof rawInput === "object" && rawInput !== null && typeof (rawInput as { plan?: unknown }).plan === "string"
        ? (rawInput as { plan: string }).plan
        : N.toolCallText(tool.content)
    if (planId !== undefined && planText !== undefined && turnId !== undefined) {
      drafts.push({ type: "plan.proposed.completed", turnId, raw, payload: { planId, markdown: planText } })
    }
    const detail = N.toolCallText(tool.content)
    drafts.push({
      type: "request.opened",
      ...withTurn(turnId),
      ...definedFields({ itemId }),
      raw,
      payload: {
        requestId: pending.requestId,
        requestKind: isPlan ? "plan_approval" : "approval",
        ...(typeof tool.title === "string" ? { title: tool.title } : {}),
        ...definedFields({ detail }),
        options: request.options.map((o) => ({
          id: OptionId.make(o.optionId),
          label: o.name,
          kind: optionKind(o.kind)
        })),
        native: { method, id },
        ...definedFields({ planId })
      }
    })
    return { drafts }
  }

  openQuestion(
    id: JsonRpcId,
    method: string,
    handler: QuestionHandler,
    params: unknown,
    raw: RawNative,
    turnId: TurnId | undefined
  ): RequestOutput {
    const decoded = handler.decode(params)
    const promptExit = decoded.ok
      ? decodePrompt({
          promptId: `${this.idPrefix}:prompt:${id}`,
          ...definedFields({ title: decoded.value.title }),
          ...definedFields({ description: decoded.value.description }),
          questions: decoded.value.questions.map((q) => ({
            id: q.id,
            label: q.label,
            ...definedFields({ header: q.header }),
            ...definedFields({ description: q.description }),
            options: q.options.map((o) =>
              o.description === undefined
                ? { id: o.id, label: o.label }
                : { id: o.id, label: o.label, description: o.description }
            ),
            multiSelect: q.multiSelect,
            allowFreeform: q.allowFreeform,
            secret: false,
            required: q.required
          })),
          source: "native",
          blocking: true
        })
      : undefined
    if (!decoded.ok || promptExit === undefined || Exit.isFailure(promptExit)) {
      // A question nobody can be shown is skipped with a reason, so the agent does not stall.
      const error = !decoded.ok
        ? decoded.error
        : promptExit !== undefined && Exit.isFailure(promptExit)
          ? String(promptExit.cause)
          : "no prompt"
      return {
        drafts: [
          {
            type: "runtime.warning",
            raw,
            payload: { code: "request_invalid", message: `${method} cannot be shown: ${error}`, detail: asJson(params) }
          }
        ],
        reply: {
          result: handler.encode(
            { outcome: "skipped", reason: "the question could not be displayed" },
            { toolCallId: undefined, title: undefined, questions: [] }
          )
        }
      }
    }
    const prompt = promptExit.value
    const pending: QuestionPending = {
      kind: "question",
      nativeId: id,
      method,
      requestId: this.requestId(id),
      turnId,
      prompt,
      handler,
      request: decoded.value
    }
    this.byKey.set(jsonRpcIdKey(id), pending)
    return {
      drafts: [
        {
          type: "request.opened",
          ...withTurn(turnId),
          raw,
          payload: {
            requestId: pending.requestId,
            requestKind: "user_input",
            ...definedFields({ title: prompt.title }),
            options: [],
            native: { method, id },
            promptId: prompt.promptId
          }
        },
        { type: "user-input.requested", ...withTurn(turnId), raw, payload: { prompt, requestId: pending.requestId } }
      ]
    }
  }

  openPlan(
    id: JsonRpcId,
    method: string,
    handler: PlanHandler,
    params: unknown,
    raw: RawNative,
    turnId: TurnId | undefined
  ): RequestOutput {
    const decoded = handler.decode(params)
    if (!decoded.ok || turnId === undefined) {
      const why = decoded.ok ? "it arrived outside a turn" : decoded.error
      return {
        drafts: [
          {
            type: "runtime.warning",
            raw,
            payload: { code: "request_invalid", message: `${method} cannot be shown: ${why}`, detail: asJson(params) }
          }
        ],
        reply: { result: handler.encode({ outcome: "cancelled" }) }
      }
    }
    const planId = PlanId.make(`${this.idPrefix}:plan:${decoded.value.toolCallId ?? id}`)
    const pending: PlanPending = {
      kind: "plan",
      nativeId: id,
      method,
      requestId: this.requestId(id),
      turnId,
      planId,
      handler
    }
    this.byKey.set(jsonRpcIdKey(id), pending)
    const title = decoded.value.title
    return {
      drafts: [
        {
          type: "plan.proposed.completed",
          turnId,
          raw,
          payload: { planId, markdown: decoded.value.markdown, ...definedFields({ title }) }
        },
        {
          type: "request.opened",
          turnId,
          raw,
          payload: {
            requestId: pending.requestId,
            requestKind: "plan_approval",
            ...definedFields({ title }),
            options: [
              { id: PLAN_ACCEPT, label: "Accept plan", kind: "allow_once" },
              { id: PLAN_REJECT, label: "Reject plan", kind: "reject_once" }
            ],
            native: { method, id },
            planId
          }
        }
      ]
    }
  }
}
