import { PlanId, type PlanStep, type PlanStepStatus, type RawNative, type TurnId } from "@planbridge/contracts"
import { Result, Schema } from "effect"
import { warningDraft } from "../kernel/EventDraft.ts"
import { decodedOr, mapped, warned } from "../kernel/Mapped.ts"
import { checklistDraft } from "../kernel/TurnDrafts.ts"
import { definedFields } from "../../util/definedFields.ts"
import * as N from "./AcpNative.ts"
import type { TodoPatch, TodosHandler } from "./AcpProfile.ts"
import type { AcpState, Drafts, Mapped } from "./AcpState.ts"
import { textChunk, toolCallItem, type TurnItems } from "./AcpTurnItems.ts"
import { configValues, modeChanged } from "./AcpModes.ts"

/** What the agent notifies, pure: session updates and extension notifications (a request's end is `AcpRequestResolve.ts`'s). */

const invalid = (s: AcpState, what: string, raw: RawNative): Mapped =>
  warned(s, "update_invalid", `${what} did not decode`, raw)

export const notification = (s: AcpState, method: string, params: unknown, raw: RawNative): Mapped => {
  if (method === "session/update") return sessionUpdate(s, params, raw)
  const handler = s.profile.extensionNotifications?.[method]
  if (handler !== undefined) return todosUpdate(s, handler, params, raw)
  // ACP extension notifications (`_`-prefixed: the current agents' `_auth/status_update`) are
  // ignored when unknown, as the spec asks: no canonical event, and no warning per session.
  if (method.startsWith("_")) return mapped(s)
  return warned(s, "unknown_notification", `unmapped notification ${method}`, raw, { method, params })
}

const decodeNotification = Schema.decodeUnknownResult(N.SessionNotification)
const decodeKind = Schema.decodeUnknownResult(N.SessionUpdate)

const sessionUpdate = (s: AcpState, params: unknown, raw: RawNative): Mapped => {
  const notification = Result.getOrUndefined(decodeNotification(params))
  const kind = Result.getOrUndefined(decodeKind(notification?.update))
  if (notification === undefined || kind === undefined) return invalid(s, "session/update", raw)
  /** The update decoded by `schema`, then mapped; one that does not decode is reported as `what`. */
  const as = <S extends Schema.Decoder<unknown>>(schema: S, what: string, map: (value: S["Type"]) => Mapped) =>
    decodedOr(schema, () => invalid(s, what, raw))(notification.update, map)
  switch (kind.sessionUpdate) {
    case "agent_message_chunk":
    case "agent_thought_chunk": {
      const streamKind = kind.sessionUpdate === "agent_message_chunk" ? "assistant_text" : "reasoning_text"
      return as(N.ChunkUpdate, "content chunk", ({ content: { type, text } }) =>
        type !== "text" || text === undefined
          ? warned(s, "unsupported_content", `content of type ${type} is not mapped`, raw)
          : inTurn(s, raw, "a content chunk", (turnId) =>
              withItems(s, textChunk(s.items, turnId, streamKind, text, raw))
            )
      )
    }
    case "tool_call":
    case "tool_call_update":
      return as(N.ToolCallFields, kind.sessionUpdate, (fields) =>
        inTurn(s, raw, "a tool call", (turnId) => withItems(s, toolCallItem(s.items, turnId, fields, raw)))
      )
    case "plan":
      return as(N.PlanUpdate, "plan", (plan) =>
        // A mirror of the todo list that already published this checklist, with ids: a second
        // snapshot without them would replace it (and count as another revision).
        s.profile.checklistAuthority === "todos" && s.todosSeen
          ? mapped(s)
          : planSnapshot(s, stepsOfEntries(plan.entries), raw)
      )
    case "plan_update":
      return as(N.PlanUpdateV2, "plan_update", ({ plan }) => {
        if (plan.type === "items" && plan.entries !== undefined)
          return planSnapshot(s, stepsOfEntries(plan.entries), raw)
        if (plan.type === "markdown" && plan.content !== undefined)
          return proposedPlan(s, plan.planId, plan.content, raw)
        // A plan in a file (`uri`): this client announces no file system to read it from.
        return warned(s, "unsupported_content", `plan_update of type ${plan.type} is not mapped`, raw)
      })
    case "plan_removed":
      // Canonical events have no withdrawn plan: the next proposal supersedes it.
      return mapped(s)
    case "current_mode_update":
      return as(N.CurrentModeUpdate, "current_mode_update", (mode) =>
        modeChanged(s, { preset: mode.currentModeId }, raw)
      )
    case "config_option_update":
      return as(N.ConfigOptionUpdate, "config_option_update", (options) =>
        modeChanged(s, configValues(s.profile, options.configOptions), raw)
      )
    case "user_message_chunk":
      // Our own prompt echoed back (or history on load); the turn's user_message already records it.
      return mapped(s.configured ? s : { ...s, historySkipped: s.historySkipped + 1 })
    case "available_commands_update":
    case "usage_update":
    case "session_info_update":
      // Slash commands, context-window usage and titles have no canonical event yet.
      return mapped(s)
    default:
      return warned(s, "unknown_update", `unmapped session update ${kind.sessionUpdate}`, raw)
  }
}

/** Turn-scoped updates need an open turn; history replayed by session/load is counted. */
const inTurn = (s: AcpState, raw: RawNative, what: string, map: (turnId: TurnId) => Mapped): Mapped => {
  if (s.turnId !== undefined) return map(s.turnId)
  if (!s.configured) return mapped({ ...s, historySkipped: s.historySkipped + 1 })
  return warned(s, "outside_turn", `${what} arrived outside a turn`, raw)
}

const withItems = (s: AcpState, next: { readonly items: TurnItems; readonly drafts: Drafts }): Mapped =>
  mapped({ ...s, items: next.items }, ...next.drafts)

/** ACP's step statuses (plan entries, Cursor todos) as canonical ones; `statusOf` is undefined for any other. */
const stepStatuses: Readonly<Record<string, PlanStepStatus>> = {
  pending: "pending",
  in_progress: "inProgress",
  completed: "completed",
  cancelled: "cancelled"
}
const statusOf = (status: string) => (Object.hasOwn(stepStatuses, status) ? stepStatuses[status] : undefined)

/** A checklist entry as the agent sent it (an ACP `plan` entry, a Cursor todo), its status still native. */
type NativeStep = Omit<PlanStep, "status"> & { readonly status: string }

const priorityOf = (p: string | undefined): PlanStep["priority"] =>
  p === "high" || p === "medium" || p === "low" ? p : undefined

/** ACP `plan` entries as native steps. */
const stepsOfEntries = (entries: ReadonlyArray<N.PlanEntry>): ReadonlyArray<NativeStep> =>
  entries.map((e) => ({ step: e.content, status: e.status, ...definedFields({ priority: priorityOf(e.priority) }) }))

/** Cursor todos as native steps (a todo without a status is pending). */
const stepsOfTodos = (todos: ReadonlyArray<TodoPatch>): ReadonlyArray<NativeStep> =>
  todos.map((t) => ({ step: t.content ?? "", status: t.status ?? "pending", ...definedFields({ id: t.id }) }))

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

/**
 * A checklist snapshot (ACP `plan`, Cursor todos); the first turns structured plan updates on. A
 * step of a status this mapping does not know is kept as `pending` and reported, never guessed.
 */
const planSnapshot = (s: AcpState, native: ReadonlyArray<NativeStep>, raw: RawNative): Mapped => {
  const turnId = s.turnId ?? s.lastTurnId
  if (turnId === undefined) return warned(s, "outside_turn", "a plan update arrived before any turn", raw)
  const turnsOn = !s.capabilities.supportsStructuredPlanUpdates
  const capabilities = { ...s.capabilities, supportsStructuredPlanUpdates: true }
  const unknownStatuses = native.flatMap(({ status }) => (statusOf(status) === undefined ? [status] : []))
  const unknown = `unknown step status ${unknownStatuses.join(", ")}; kept as pending`
  const steps = native.map((entry): PlanStep => ({ ...entry, status: statusOf(entry.status) ?? "pending" }))
  return mapped(
    { ...s, capabilities },
    ...(turnsOn ? [{ type: "capabilities.changed", raw, payload: { capabilities } } as const] : []),
    ...(unknownStatuses.length > 0 ? [warningDraft("plan_status_unknown", unknown, raw)] : []),
    checklistDraft(turnId, steps, "native", raw)
  )
}

/**
 * A proposed plan in markdown (`plan_update`): `plan.proposed.completed`, unless it is the plan
 * the turn already proposed (claude-agent-acp sends the approved ExitPlanMode plan again).
 */
const proposedPlan = (s: AcpState, nativePlanId: string, markdown: string, raw: RawNative): Mapped => {
  const turnId = s.turnId ?? s.lastTurnId
  if (turnId === undefined) return warned(s, "outside_turn", "a proposed plan arrived before any turn", raw)
  const last = s.proposed
  if (last !== undefined && last.turnId === turnId && last.markdown === markdown) return mapped(s)
  // Native plan ids repeat (claude-agent-acp's is always `plan-mode`): the turn makes it unique.
  const planId = PlanId.make(`${s.idPrefix}:plan:${s.turnSeq}:${nativePlanId}`)
  const proposed = { planId, markdown, turnId }
  return mapped({ ...s, proposed }, { type: "plan.proposed.completed", turnId, raw, payload: { planId, markdown } })
}

/** A todo list extension (a notification, or a request answered with `reply`). */
export const todosUpdate = (
  s: AcpState,
  handler: TodosHandler,
  params: unknown,
  raw: RawNative
): Mapped & { readonly reply: N.Reply } => {
  const decoded = handler.decode(params)
  if (Result.isFailure(decoded)) {
    const message = `todo update did not decode: ${decoded.failure.message}`
    const drafts = [warningDraft("request_invalid", message, raw, params)]
    return { state: s, drafts, reply: { error: { code: -32602, message: "Invalid params" } } }
  }
  const todos = mergeTodos(s.todos, decoded.success.todos, decoded.success.merge)
  const snapshot = planSnapshot({ ...s, todos, todosSeen: true }, stepsOfTodos(todos), raw)
  return { ...snapshot, reply: { result: handler.ack(todos) } }
}
