import type { RuntimeEventOf } from "@planbridge/contracts"
import { byThread } from "./ByThread.ts"
import { jsonColumn } from "./JsonColumn.ts"
import type { ProjectionStatements } from "./ProjectionStatements.ts"

/** A turn's checklist revisions of the batch. */
interface PendingRevisions {
  readonly threadId: string
  readonly turnId: string
  readonly revisions: Array<RuntimeEventOf<"turn.plan.updated">>
  /** Where the turn's last revision came in the log, so revisions are written in the log's order. */
  lastOrder: number
}

/** The checklist revisions (`turn.plan.updated`): a batch's revisions by turn, written by `flush`. */
export const makeChecklistProjection = (s: ProjectionStatements) => {
  const pendingSnapshots = byThread<PendingRevisions>()
  let revisionOrder = 0

  const revised = (event: RuntimeEventOf<"turn.plan.updated">): void => {
    const threadId = event.threadId
    const pending = pendingSnapshots.get(threadId, event.turnId)
    const lastOrder = revisionOrder++
    if (pending === undefined)
      pendingSnapshots.set(threadId, event.turnId, {
        threadId,
        turnId: event.turnId,
        revisions: [event],
        lastOrder
      })
    else {
      pending.revisions.push(event)
      pending.lastOrder = lastOrder
    }
  }

  /** Every revision is kept; only the newest of its turn is marked latest. */
  const flushSnapshots = (
    threadId: string,
    turnId: string,
    revisions: ReadonlyArray<RuntimeEventOf<"turn.plan.updated">>
  ): void => {
    const key = { threadId, turnId }
    const last = s.lastRevision.get<{ revision: number | null }>(key)?.revision ?? 0
    if (last > 0) s.unmarkLatest.run(key)
    for (const [i, event] of revisions.entries()) {
      const plan = event.payload.plan
      s.insertSnapshot.run({
        threadId,
        turnId,
        revision: last + i + 1,
        isLatest: i === revisions.length - 1,
        explanation: plan.explanation,
        steps: jsonColumn(plan.steps),
        source: plan.source,
        eventId: event.eventId,
        at: event.createdAt
      })
    }
  }

  const flush = (): void => {
    // By each turn's last revision: the revision written last (SQLite's highest rowid, what a
    // snapshot's `latestPlan` reads) is then the newest in the log, also when two turns of one
    // thread revise their checklists in one batch.
    const snapshots = [...pendingSnapshots.values()].sort((a, b) => a.lastOrder - b.lastOrder)
    for (const { threadId, turnId, revisions } of snapshots) flushSnapshots(threadId, turnId, revisions)
  }

  const clear = (): void => pendingSnapshots.clear()

  return { revised, flush, clear }
}
