import type { ItemStatus, ItemType, PlanStep, PlanStepStatus } from "@planbridge/contracts"
import type { EventDraft } from "../kernel/EventDraft.ts"
import type { PlanEntry, PromptResponse, ToolCallFields } from "./AcpNative.ts"
import type { TodoPatch } from "./AcpProfile.ts"
import { definedFields } from "../../util/definedFields.ts"

/** Pure helpers that read ACP tool calls and plan entries into canonical shapes. */

export const itemTypeOfKind = (kind: string | null | undefined): ItemType => {
  switch (kind) {
    case "execute":
      return "command"
    case "edit":
    case "delete":
    case "move":
      return "file_change"
    default:
      return "tool_call"
  }
}

export const itemStatusOf = (status: string | null | undefined): ItemStatus => {
  switch (status) {
    case "completed":
      return "completed"
    case "failed":
      return "failed"
    default:
      return "inProgress"
  }
}

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

/** ACP `plan` entries → steps; an unknown status is kept as `pending` and reported. */
export const stepsOfEntries = (entries: ReadonlyArray<PlanEntry>): StepsResult => {
  const unknownStatuses: Array<string> = []
  const steps = entries.map((entry): PlanStep => {
    const status = planStepStatus(entry.status)
    if (status === undefined) unknownStatuses.push(entry.status)
    const priority = priorityOf(entry.priority)
    return priority === undefined
      ? { step: entry.content, status: status ?? "pending" }
      : { step: entry.content, status: status ?? "pending", priority }
  })
  return { steps, unknownStatuses }
}

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

export const stepsOfTodos = (todos: ReadonlyArray<TodoPatch>): StepsResult => {
  const unknownStatuses: Array<string> = []
  const steps = todos.map((todo): PlanStep => {
    const status = planStepStatus(todo.status ?? "pending")
    if (status === undefined && todo.status !== undefined) unknownStatuses.push(todo.status)
    const step: { step: string; status: PlanStepStatus; id?: string } = {
      step: todo.content ?? "",
      status: status ?? "pending"
    }
    if (todo.id !== undefined) step.id = todo.id
    return step
  })
  return { steps, unknownStatuses }
}

/** A `session/prompt` response as the payload of `turn.completed`. */
export const turnCompletion = (
  response: PromptResponse
): Extract<EventDraft, { type: "turn.completed" }>["payload"] => {
  const u = response.usage ?? undefined
  const usage =
    u === undefined
      ? undefined
      : {
          ...definedFields({ inputTokens: u.inputTokens }),
          ...definedFields({ outputTokens: u.outputTokens }),
          ...definedFields({ totalTokens: u.totalTokens }),
          ...(u.cachedReadTokens === undefined || u.cachedReadTokens === null
            ? {}
            : { cachedInputTokens: u.cachedReadTokens }),
          ...(u.thoughtTokens === undefined || u.thoughtTokens === null
            ? {}
            : { reasoningOutputTokens: u.thoughtTokens })
        }
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
