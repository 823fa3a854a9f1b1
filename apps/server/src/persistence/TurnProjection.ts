import type { RuntimeEventOf } from "@planbridge/contracts"
import { byThread } from "./ByThread.ts"
import { jsonColumn } from "./JsonColumn.ts"
import type { ProjectionStatements } from "./ProjectionStatements.ts"

/** A turn row as the batch's events leave it (see the `turn` statement). */
interface PendingTurn {
  readonly threadId: string
  readonly turnId: string
  mode: string | null
  readonly startedAt: string
  completed:
    | {
        readonly status: string
        readonly error: string | null
        readonly usage: string | null
        readonly durationMs: number | null
        readonly at: string
      }
    | undefined
}

/** The turn rows: a batch's starts and completions folded, each turn written once by `flush`. */
export const makeTurnProjection = (s: ProjectionStatements) => {
  const pendingTurns = byThread<PendingTurn>()

  const started = (event: RuntimeEventOf<"turn.started">): void => {
    const threadId = event.threadId
    const turn = pendingTurns.get(threadId, event.turnId)
    const mode = event.payload.mode ?? null
    if (turn === undefined)
      pendingTurns.set(threadId, event.turnId, {
        threadId,
        turnId: event.turnId,
        mode,
        startedAt: event.createdAt,
        completed: undefined
      })
    else if (mode !== null) turn.mode = mode
  }

  const completed = (event: RuntimeEventOf<"turn.completed">): void => {
    const threadId = event.threadId
    const at = event.createdAt
    const q = event.payload
    const completed = {
      status: q.status,
      error: jsonColumn(q.error),
      usage: jsonColumn(q.usage),
      durationMs: q.durationMs ?? null,
      at
    }
    const turn = pendingTurns.get(threadId, event.turnId)
    if (turn === undefined)
      pendingTurns.set(threadId, event.turnId, {
        threadId,
        turnId: event.turnId,
        mode: null,
        startedAt: at,
        completed
      })
    else turn.completed = completed
  }

  const flush = (): void => {
    for (const turn of pendingTurns.values()) {
      const done = turn.completed
      s.turn.run({
        threadId: turn.threadId,
        turnId: turn.turnId,
        mode: turn.mode,
        startedAt: turn.startedAt,
        completed: done === undefined ? 0 : 1,
        status: done === undefined ? "inProgress" : done.status,
        error: done?.error ?? null,
        usage: done?.usage ?? null,
        durationMs: done?.durationMs ?? null,
        completedAt: done?.at ?? null
      })
    }
  }

  const clear = (): void => pendingTurns.clear()

  return { started, completed, flush, clear }
}
