import type { ThreadId, ThreadSnapshot, ThreadSummary } from "@planbridge/contracts"
import { Context, type Effect } from "effect"
import type { StoreError } from "./StoreError.ts"
import type { PageRefusal } from "./ThreadHistory.ts"
import type { SnapshotJson } from "./ThreadSnapshotJson.ts"

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
