import type { PlanStep, PlanStepStatus } from "@planbridge/contracts"
import { Option, Schema } from "effect"
import {
  TaskCreateInput,
  TaskCreateOutput,
  TaskGetOutput,
  TaskListOutput,
  TaskUpdateInput,
  TaskUpdateOutput,
  TodoWriteInput,
  TodoWriteOutput,
  type Todo
} from "./ClaudeNative.ts"
import { definedFields } from "../../util/definedFields.ts"

/**
 * Claude's two checklist tool families, folded into canonical snapshots. `TodoWrite` sends the
 * whole list every time. The `Task*` tools (the CLI 2.1.333 default) change one task at a time,
 * so the session keeps the list and publishes all of it after every change.
 */

export const CHECKLIST_TOOLS: ReadonlySet<string> = new Set([
  "TodoWrite",
  "TaskCreate",
  "TaskUpdate",
  "TaskList",
  "TaskGet"
])

export interface TaskEntry {
  readonly id: string
  readonly subject: string
  readonly status: PlanStepStatus
  readonly activeForm?: string
}

const statusOf = (status: Todo["status"]): PlanStepStatus => (status === "in_progress" ? "inProgress" : status)

const stepsOfTodos = (todos: ReadonlyArray<Todo>): ReadonlyArray<PlanStep> =>
  todos.map((todo) => ({
    step: todo.content,
    status: statusOf(todo.status),
    ...definedFields({ activeForm: todo.activeForm })
  }))

export const stepsOfTasks = (tasks: ReadonlyArray<TaskEntry>): ReadonlyArray<PlanStep> =>
  tasks.map((task) => ({
    step: task.subject,
    status: task.status,
    id: task.id,
    ...definedFields({ activeForm: task.activeForm })
  }))

type ChecklistOutcome =
  | { readonly kind: "todos"; readonly steps: ReadonlyArray<PlanStep> }
  | { readonly kind: "tasks"; readonly tasks: ReadonlyArray<TaskEntry> }
  | { readonly kind: "unchanged" }
  | { readonly kind: "malformed"; readonly message: string }

/** The list with task `id` changed, or unchanged when the list holds no such task. */
const withTask = (tasks: ReadonlyArray<TaskEntry>, id: string, change: Partial<TaskEntry>): ChecklistOutcome =>
  tasks.some((t) => t.id === id)
    ? { kind: "tasks", tasks: tasks.map((t) => (t.id === id ? { ...t, ...change } : t)) }
    : { kind: "unchanged" }

/**
 * Applies one finished checklist tool call (its input and its `tool_use_result`) to the task
 * list. A failed call (`isError`) changes nothing.
 */
export const applyChecklistResult = (
  tasks: ReadonlyArray<TaskEntry>,
  toolName: string,
  input: unknown,
  result: unknown,
  isError: boolean
): ChecklistOutcome => {
  if (isError) return { kind: "unchanged" }
  const malformed = { kind: "malformed", message: `unexpected ${toolName} payload` } as const
  switch (toolName) {
    case "TodoWrite": {
      const output = Schema.decodeUnknownOption(TodoWriteOutput)(result)
      if (Option.isSome(output)) return { kind: "todos", steps: stepsOfTodos(output.value.newTodos) }
      const fromInput = Schema.decodeUnknownOption(TodoWriteInput)(input)
      return Option.isSome(fromInput) ? { kind: "todos", steps: stepsOfTodos(fromInput.value.todos) } : malformed
    }
    case "TaskCreate": {
      const output = Schema.decodeUnknownOption(TaskCreateOutput)(result)
      if (Option.isNone(output)) return malformed
      const activeForm = Option.getOrUndefined(Schema.decodeUnknownOption(TaskCreateInput)(input))?.activeForm
      const entry: TaskEntry = {
        id: output.value.task.id,
        subject: output.value.task.subject,
        status: "pending",
        ...definedFields({ activeForm })
      }
      return { kind: "tasks", tasks: [...tasks.filter((t) => t.id !== entry.id), entry] }
    }
    case "TaskUpdate": {
      const output = Schema.decodeUnknownOption(TaskUpdateOutput)(result)
      const update = Schema.decodeUnknownOption(TaskUpdateInput)(input)
      if (Option.isNone(output) || Option.isNone(update)) return malformed
      if (!output.value.success) return { kind: "unchanged" }
      const change = update.value
      const status = change.status
      if (status === "deleted") return { kind: "tasks", tasks: tasks.filter((t) => t.id !== change.taskId) }
      return withTask(tasks, change.taskId, {
        ...definedFields({ subject: change.subject, activeForm: change.activeForm }),
        ...(status !== undefined ? { status: statusOf(status) } : {})
      })
    }
    case "TaskList": {
      const output = Schema.decodeUnknownOption(TaskListOutput)(result)
      if (Option.isNone(output)) return malformed
      // The CLI's list is authoritative; it omits activeForm, so keep the one we know.
      return {
        kind: "tasks",
        tasks: output.value.tasks.map((t) => {
          const known = tasks.find((k) => k.id === t.id)?.activeForm
          return { id: t.id, subject: t.subject, status: statusOf(t.status), ...definedFields({ activeForm: known }) }
        })
      }
    }
    case "TaskGet": {
      const output = Schema.decodeUnknownOption(TaskGetOutput)(result)
      if (Option.isNone(output)) return malformed
      const task = output.value.task
      if (task === null) return { kind: "unchanged" }
      return withTask(tasks, task.id, { subject: task.subject, status: statusOf(task.status) })
    }
    default:
      return { kind: "unchanged" }
  }
}

/** True when two task lists would publish the same snapshot (TaskList/TaskGet often change nothing). */
export const sameTasks = (a: ReadonlyArray<TaskEntry>, b: ReadonlyArray<TaskEntry>) =>
  JSON.stringify(stepsOfTasks(a)) === JSON.stringify(stepsOfTasks(b))
