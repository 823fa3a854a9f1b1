import type { ThreadId, ThreadSnapshot, ThreadSummary } from "@planbridge/contracts"
import { and, eq } from "drizzle-orm"
import { Context, Effect, Layer } from "effect"
import { failsAs, firstRow, StatementPort } from "./StatementPort.ts"
import type { StoreError } from "./StoreError.ts"
import type { PageRefusal } from "./ThreadHistory.ts"
import type { SnapshotJson } from "./ThreadSnapshotJson.ts"
import { listThreads, readThreadSummary, setThreadArchived } from "./ThreadSummaries.ts"

/**
 * Threads as their projections hold them. A snapshot is consistent with its `seq`: the thread's
 * events after `seq` (EventStore.readThread) apply on top of it.
 */
export class ThreadReads extends Context.Service<
  ThreadReads,
  {
    /** The whole thread in the shape clients render; undefined when there is no such thread. */
    readonly snapshot: (threadId: ThreadId) => Effect.Effect<ThreadSnapshot | undefined, StoreError>
    /**
     * The snapshot with its latest `turns` turns (ThreadHistory.ts) as the JSON text clients
     * receive (what the WebSocket feed sends); undefined when there is no such thread.
     */
    readonly snapshotJson: (threadId: ThreadId, turns: number) => Effect.Effect<SnapshotJson | undefined, StoreError>
    /** The `ThreadHistoryPage` of `limit` turns before the turn `before`, as JSON, or why there is none. */
    readonly historyJson: (
      threadId: ThreadId,
      before: string,
      limit: number
    ) => Effect.Effect<SnapshotJson | PageRefusal, StoreError>
    /** Every thread, newest activity first; `isLive` is the session manager's to answer. */
    readonly list: (isLive: (threadId: string) => boolean) => Effect.Effect<ReadonlyArray<ThreadSummary>, StoreError>
    /** One thread's summary, as `list` has it; undefined when there is no such thread. */
    readonly summary: (
      threadId: ThreadId,
      isLive: (threadId: string) => boolean
    ) => Effect.Effect<ThreadSummary | undefined, StoreError>
    /**
     * The one write here: files a thread away at `at`, or back with `undefined` (`thread.archive`;
     * not a projection, ThreadSummaries.ts). The archive time in force after it (null: not
     * archived); undefined when there is no such thread.
     */
    readonly setArchived: (
      threadId: ThreadId,
      at: string | undefined
    ) => Effect.Effect<{ readonly archivedAt: string | null } | undefined, StoreError>
    readonly exists: (threadId: string) => Effect.Effect<boolean, StoreError>
    /** A turn of the thread that has started and not completed, if any. */
    readonly runningTurn: (threadId: string) => Effect.Effect<string | undefined, StoreError>
  }
>()("planbridge/ThreadReads") {}

/**
 * How an engine reads a whole snapshot and its windows: where the engines legitimately differ
 * (SQLite: synchronous reads of the one connection, statements prepared on it; PostgreSQL: one
 * REPEATABLE READ transaction, so that every table is read as of one commit).
 */
export type SnapshotReads = Pick<ThreadReads["Service"], "snapshot" | "snapshotJson" | "historyJson">

/** `ThreadReads` on either engine: its snapshot reads (`snapshots`), the rest over the statement port. */
export const threadReadsWith = (snapshots: SnapshotReads): Layer.Layer<ThreadReads, never, StatementPort> =>
  Layer.effect(
    ThreadReads,
    Effect.gen(function* () {
      const port = yield* StatementPort
      const { db, tables } = port
      const { threads, turns } = tables
      return ThreadReads.of({
        ...snapshots,
        list: (isLive) => listThreads(port, isLive).pipe(failsAs("read", "list threads")),
        summary: (threadId, isLive) =>
          readThreadSummary(port, threadId, isLive).pipe(failsAs("read", `read thread ${threadId}`)),
        setArchived: (threadId, at) =>
          setThreadArchived(port, threadId, at).pipe(failsAs("write", `archive thread ${threadId}`)),
        exists: (threadId) =>
          firstRow(
            port,
            db.select({ threadId: threads.threadId }).from(threads).where(eq(threads.threadId, threadId))
          ).pipe(
            Effect.map((row) => row !== undefined),
            failsAs("read", `read thread ${threadId}`)
          ),
        runningTurn: (threadId) =>
          firstRow(
            port,
            db
              .select({ turnId: turns.turnId })
              .from(turns)
              .where(and(eq(turns.threadId, threadId), eq(turns.status, "inProgress")))
              .limit(1)
          ).pipe(
            Effect.map((row) => row?.turnId),
            failsAs("read", `read the turns of thread ${threadId}`)
          )
      })
    })
  )
