import type { ItemStatus, ItemType, PlanStep, PlanStepStatus } from "@planbridge/contracts"
import type { EventDraft } from "../kernel/EventDraft.ts"
import type { PlanEntry, PromptResponse, ToolCallFields } from "./AcpNative.ts"
import type { TodoPatch } from "./AcpProfile.ts"
import { definedFields } from "../../util/definedFields.ts"

/** Pure helpers that read ACP tool calls and plan entries into canonical shapes. */

const itemTypes: Readonly<Record<string, ItemType>> = {
  execute: "command",
  edit: "file_change",
  delete: "file_change",
  move: "file_change"
}
/** An ACP tool kind as an item type: commands and file changes; anything else is a tool call. */
export const itemTypeOfKind = (kind: string | null | undefined): ItemType =>
  (typeof kind === "string" && Object.hasOwn(itemTypes, kind) ? itemTypes[kind] : undefined) ?? "tool_call"

export const itemStatusOf = (status: string | null | undefined): ItemStatus =>
  status === "completed" || status === "failed" ? status : "inProgress"

export const isTerminal = (status: ItemStatus): boolean => status !== "inProgress"

/** Later fields win; absent or null fields in an update keep the earlier value. */
export const mergeToolCall = (base: ToolCallFields | undefined, update: ToolCallFields): ToolCallFields => {
  if (base === undefined) return update
  const merged: Record<string, unknown> = { ...base }
  for (const [key, value] of Object.entries(update)) {
    if (value !== undefined && value !== null) merged[key] = value
  }
  return merged as ToolCallFields
}

const stepStatuses: Readonly<Record<string, PlanStepStatus>> = {
  pending: "pending",
  in_progress: "inProgress",
  completed: "completed",
  cancelled: "cancelled"
}

/** `undefined` for a status this mapping does not know (reported, never guessed). */
export const planStepStatus = (status: string | undefined): PlanStepStatus | undefined =>
  status !== undefined && Object.hasOwn(stepStatuses, status) ? stepStatuses[status] : undefined

export interface StepsResult {
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
export const stepsOfEntries = (entries: ReadonlyArray<PlanEntry>): StepsResult =>
  stepsOf(entries, (e) => ({ step: e.content, status: e.status, priority: priorityOf(e.priority) }))

/** Cursor todos → steps (a todo without a status is pending). */
export const stepsOfTodos = (todos: ReadonlyArray<TodoPatch>): StepsResult =>
  stepsOf(todos, (t) => ({ step: t.content ?? "", status: t.status ?? "pending", id: t.id }))

/** Cursor todos: `merge` patches entries by id (appending new ones), otherwise replaces. */
export const mergeTodos = (
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

/** A `session/prompt` response as the payload of `turn.completed`. */
export const turnCompletion = (
  response: PromptResponse
): Extract<EventDraft, { type: "turn.completed" }>["payload"] => {
  const u = response.usage ?? undefined
  const usage =
    u === undefined
      ? undefined
      : definedFields({
          inputTokens: u.inputTokens,
          outputTokens: u.outputTokens,
          totalTokens: u.totalTokens,
          cachedInputTokens: u.cachedReadTokens ?? undefined,
          reasoningOutputTokens: u.thoughtTokens ?? undefined
        })
  const withUsage = usage === undefined ? {} : { usage }
  switch (response.stopReason) {
    case "cancelled":
      return { status: "interrupted", ...withUsage }
    case "refusal":
      return { status: "failed", error: { message: "the agent refused", code: "refusal" }, ...withUsage }
    default:
      return { status: "completed", ...withUsage }
  }
}
