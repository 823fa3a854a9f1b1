import { PlanId, type PlanStep, type PlanStepStatus, type RawNative, type TurnId } from "@planbridge/contracts"
import { rawOf, warningDraft, type EventDraft } from "../kernel/EventDraft.ts"
import { definedFields } from "../../util/definedFields.ts"
import * as N from "./AcpNative.ts"
import type { Reply } from "./AcpNative.ts"
import type { TodoPatch, TodosHandler } from "./AcpProfile.ts"
import { decode, type AcpState, type Mapped } from "./AcpState.ts"
import { textChunk, toolCallItem, type StreamKind } from "./AcpTurnItems.ts"
import { configValues, modeChanged } from "./AcpModes.ts"

/** What the agent notifies, pure: session updates and extension notifications (a request's end is `AcpRequestResolve.ts`'s). */

const invalid = (s: AcpState, what: string, raw: RawNative): Mapped => ({
  state: s,
  drafts: [warningDraft("update_invalid", `${what} did not decode`, raw)]
})

export const notification = (s: AcpState, method: string, params: unknown): Mapped => {
  const raw = rawOf("acp.notification", method, params)
  if (method === "session/update") return sessionUpdate(s, params, raw)
  const handler = s.profile.extensionNotifications[method]
  if (handler !== undefined) return todosUpdate(s, handler, params, raw)
  // ACP extension notifications (`_`-prefixed: the current agents' `_auth/status_update`) are
  // ignored when unknown, as the spec asks: no canonical event, and no warning per session.
  if (method.startsWith("_")) return { state: s, drafts: [] }
  const message = `unmapped notification ${method}`
  return { state: s, drafts: [warningDraft("unknown_notification", message, raw, { method, params })] }
}

const sessionUpdate = (s: AcpState, params: unknown, raw: RawNative): Mapped => {
  const notification = decode(N.SessionNotification, params)
  const kind = decode(N.SessionUpdate, notification?.update)
  if (notification === undefined || kind === undefined) return invalid(s, "session/update", raw)
  const update = notification.update
  switch (kind.sessionUpdate) {
    case "agent_message_chunk":
    case "agent_thought_chunk":
      return chunk(s, kind.sessionUpdate === "agent_message_chunk" ? "assistant_text" : "reasoning_text", update, raw)
    case "tool_call":
    case "tool_call_update": {
      const fields = decode(N.ToolCallFields, update)
      if (fields === undefined) return invalid(s, kind.sessionUpdate, raw)
      return inTurn(s, raw, "a tool call", (turnId) => {
        const next = toolCallItem(s.items, turnId, fields, raw)
        return { state: { ...s, items: next.items }, drafts: next.drafts }
      })
    }
    case "plan": {
      const plan = decode(N.PlanUpdate, update)
      if (plan === undefined) return invalid(s, "plan", raw)
      // A mirror of the todo list that already published this checklist, with ids: a second
      // snapshot without them would replace it (and count as another revision).
      if (s.profile.checklistAuthority === "todos" && s.todosSeen) return { state: s, drafts: [] }
      return planSnapshot(s, stepsOfEntries(plan.entries), raw)
    }
    case "plan_update": {
      const decoded = decode(N.PlanUpdateV2, update)
      if (decoded === undefined) return invalid(s, "plan_update", raw)
      const plan = decoded.plan
      if (plan.type === "items" && plan.entries !== undefined) return planSnapshot(s, stepsOfEntries(plan.entries), raw)
      if (plan.type === "markdown" && plan.content !== undefined) return proposedPlan(s, plan.planId, plan.content, raw)
      // A plan in a file (`uri`): this client announces no file system to read it from.
      const message = `plan_update of type ${plan.type} is not mapped`
      return { state: s, drafts: [warningDraft("unsupported_content", message, raw)] }
    }
    case "plan_removed":
      // Canonical events have no withdrawn plan: the next proposal supersedes it.
      return { state: s, drafts: [] }
    case "current_mode_update": {
      const mode = decode(N.CurrentModeUpdate, update)
      return mode === undefined
        ? invalid(s, "current_mode_update", raw)
        : modeChanged(s, { preset: mode.currentModeId }, raw)
    }
    case "config_option_update": {
      const options = decode(N.ConfigOptionUpdate, update)
      if (options === undefined) return invalid(s, "config_option_update", raw)
      return modeChanged(s, configValues(s.profile, options.configOptions), raw)
    }
    case "user_message_chunk":
      // Our own prompt echoed back (or history on load); the turn's user_message already records it.
      return { state: s.configured ? s : { ...s, historySkipped: s.historySkipped + 1 }, drafts: [] }
    case "available_commands_update":
    case "usage_update":
    case "session_info_update":
      // Slash commands, context-window usage and titles have no canonical event yet.
      return { state: s, drafts: [] }
    default:
      return {
        state: s,
        drafts: [warningDraft("unknown_update", `unmapped session update ${kind.sessionUpdate}`, raw)]
      }
  }
}

/** Turn-scoped updates need an open turn; history replayed by session/load is counted. */
const inTurn = (s: AcpState, raw: RawNative, what: string, map: (turnId: TurnId) => Mapped): Mapped => {
  if (s.turnId !== undefined) return map(s.turnId)
  if (!s.configured) return { state: { ...s, historySkipped: s.historySkipped + 1 }, drafts: [] }
  return { state: s, drafts: [warningDraft("outside_turn", `${what} arrived outside a turn`, raw)] }
}

const chunk = (s: AcpState, streamKind: StreamKind, update: unknown, raw: RawNative): Mapped => {
  const chunk = decode(N.ChunkUpdate, update)
  if (chunk === undefined) return invalid(s, "content chunk", raw)
  const text = chunk.content.text
  if (chunk.content.type !== "text" || text === undefined) {
    const message = `content of type ${chunk.content.type} is not mapped`
    return { state: s, drafts: [warningDraft("unsupported_content", message, raw)] }
  }
  return inTurn(s, raw, "a content chunk", (turnId) => {
    const next = textChunk(s.items, turnId, streamKind, text, raw)
    return { state: { ...s, items: next.items }, drafts: next.drafts }
  })
}

const stepStatuses: Readonly<Record<string, PlanStepStatus>> = {
  pending: "pending",
  in_progress: "inProgress",
  completed: "completed",
  cancelled: "cancelled"
}

/** `undefined` for a status this mapping does not know (reported, never guessed). */
const planStepStatus = (status: string | undefined): PlanStepStatus | undefined =>
  status !== undefined && Object.hasOwn(stepStatuses, status) ? stepStatuses[status] : undefined

interface StepsResult {
  readonly steps: ReadonlyArray<PlanStep>
  readonly unknownStatuses: ReadonlyArray<string>
}

const priorityOf = (p: string | undefined): PlanStep["priority"] =>
  p === "high" || p === "medium" || p === "low" ? p : undefined

interface NativeStep {
  readonly step: string
  readonly status: string
  readonly id?: string | undefined
  readonly priority?: PlanStep["priority"]
}
/** Checklist entries as steps: an unknown status is kept as `pending` and reported, never guessed. */
const stepsOf = <E>(entries: ReadonlyArray<E>, read: (entry: E) => NativeStep): StepsResult => {
  const unknownStatuses: Array<string> = []
  const steps = entries.map((entry): PlanStep => {
    const { step, status, id, priority } = read(entry)
    const known = planStepStatus(status)
    if (known === undefined) unknownStatuses.push(status)
    return { step, status: known ?? "pending", ...definedFields({ priority, id }) }
  })
  return { steps, unknownStatuses }
}

/** ACP `plan` entries → steps. */
const stepsOfEntries = (entries: ReadonlyArray<N.PlanEntry>): StepsResult =>
  stepsOf(entries, (e) => ({ step: e.content, status: e.status, priority: priorityOf(e.priority) }))

/** Cursor todos → steps (a todo without a status is pending). */
const stepsOfTodos = (todos: ReadonlyArray<TodoPatch>): StepsResult =>
  stepsOf(todos, (t) => ({ step: t.content ?? "", status: t.status ?? "pending", id: t.id }))

/** Cursor todos: `merge` patches entries by id (appending new ones), otherwise replaces. */
const mergeTodos = (
  current: ReadonlyArray<TodoPatch>,
  patches: ReadonlyArray<TodoPatch>,
  merge: boolean
): ReadonlyArray<TodoPatch> => {
  if (!merge) return patches
  const next = [...current]
  for (const patch of patches) {
    const index = patch.id === undefined ? -1 : next.findIndex((t) => t.id === patch.id)
    if (index >= 0) next[index] = { ...next[index], ...patch }
    else next.push(patch)
  }
  return next
}

/** A checklist snapshot (ACP `plan`, Cursor todos); the first turns structured plan updates on. */
const planSnapshot = (s: AcpState, result: StepsResult, raw: RawNative): Mapped => {
  const turnId = s.turnId ?? s.lastTurnId
  if (turnId === undefined)
    return { state: s, drafts: [warningDraft("outside_turn", "a plan update arrived before any turn", raw)] }
  const drafts: Array<EventDraft> = []
  let capabilities = s.capabilities
  if (!capabilities.supportsStructuredPlanUpdates) {
    capabilities = { ...capabilities, supportsStructuredPlanUpdates: true }
    drafts.push({ type: "capabilities.changed", raw, payload: { capabilities } })
  }
  if (result.unknownStatuses.length > 0) {
    const message = `unknown step status ${result.unknownStatuses.join(", ")}; kept as pending`
    drafts.push(warningDraft("plan_status_unknown", message, raw))
  }
  const plan = { explanation: null, steps: [...result.steps], source: "native" as const }
  drafts.push({ type: "turn.plan.updated", turnId, raw, payload: { plan } })
  return { state: { ...s, capabilities }, drafts }
}

/**
 * A proposed plan in markdown (`plan_update`): `plan.proposed.completed`, unless it is the plan
 * the turn already proposed (claude-agent-acp sends the approved ExitPlanMode plan again).
 */
const proposedPlan = (s: AcpState, nativePlanId: string, markdown: string, raw: RawNative): Mapped => {
  const turnId = s.turnId ?? s.lastTurnId
  if (turnId === undefined)
    return { state: s, drafts: [warningDraft("outside_turn", "a proposed plan arrived before any turn", raw)] }
  const last = s.proposed
  if (last !== undefined && last.turnId === turnId && last.markdown === markdown) return { state: s, drafts: [] }
  // Native plan ids repeat (claude-agent-acp's is always `plan-mode`): the turn makes it unique.
  const planId = PlanId.make(`${s.idPrefix}:plan:${s.turnSeq}:${nativePlanId}`)
  return {
    state: { ...s, proposed: { planId, markdown, turnId } },
    drafts: [{ type: "plan.proposed.completed", turnId, raw, payload: { planId, markdown } }]
  }
}

/** A todo list extension (a notification, or a request answered with `reply`). */
export const todosUpdate = (
  s: AcpState,
  handler: TodosHandler,
  params: unknown,
  raw: RawNative
): Mapped & { readonly reply: Reply } => {
  const decoded = handler.decode(params)
  if (!decoded.ok) {
    const message = `todo update did not decode: ${decoded.error}`
    const drafts = [warningDraft("request_invalid", message, raw, params)]
    return { state: s, drafts, reply: { error: { code: -32602, message: "Invalid params" } } }
  }
  const todos = mergeTodos(s.todos, decoded.value.todos, decoded.value.merge)
  const snapshot = planSnapshot({ ...s, todos, todosSeen: true }, stepsOfTodos(todos), raw)
  return { ...snapshot, reply: { result: handler.ack(todos) } }
}
