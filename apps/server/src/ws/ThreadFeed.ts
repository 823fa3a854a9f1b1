import type { ServerFrame, ThreadId } from "@planbridge/contracts"
import type { Db } from "../persistence/Database.ts"
import type { StoredEvent } from "../persistence/EventStore.ts"
import { readThreadSnapshot } from "../persistence/ThreadSnapshots.ts"

/** Past this many missed events a resume gets a snapshot instead of the backlog. */
export const SNAPSHOT_THRESHOLD = 5_000
const PAGE = 1_000

export interface FeedDeps {
  readonly db: Db
  readonly readThread: (threadId: ThreadId, afterThreadSeq: number, limit: number) => ReadonlyArray<StoredEvent>
  readonly send: (frame: ServerFrame) => void
}

/**
 * The threads one connection follows, and the last per-thread sequence it was sent. Live
 * events come from a subscription opened when the connection was, so nothing committed after
 * that is missed; anything committed before is read from the log. Catch-up runs synchronously
 * (better-sqlite3 reads, buffered sends), so no live event can slip between the backlog and
 * the cursor; live events at or below the cursor are dropped, and a gap (which would mean a
 * missed publication) is filled from the log rather than passed on.
 */
export const makeThreadFeed = (deps: FeedDeps) => {
  const cursors = new Map<string, number>()

  const sendBacklog = (threadId: ThreadId, after: number): number => {
    let cursor = after
    for (;;) {
      const page = deps.readThread(threadId, cursor, PAGE)
      for (const stored of page) deps.send({ type: "event", threadId, seq: stored.threadSeq, event: stored.event })
      if (page.length < PAGE) return page.length === 0 ? cursor : page[page.length - 1]!.threadSeq
      cursor = page[page.length - 1]!.threadSeq
    }
  }

  /** Returns false when the thread does not exist. */
  const subscribe = (threadId: ThreadId, afterSeq: number | undefined): boolean => {
    const snapshot = afterSeq === undefined ? readThreadSnapshot(deps.db, threadId) : undefined
    if (afterSeq !== undefined) {
      const current = readThreadSnapshot(deps.db, threadId)
      if (current === undefined) return false
      if (afterSeq > current.seq || current.seq - afterSeq > SNAPSHOT_THRESHOLD) {
        // A cursor from the future (another database) or too far behind: start over from a snapshot.
        deps.send({ type: "snapshot", threadId, snapshot: current })
        cursors.set(threadId, sendBacklog(threadId, current.seq))
        return true
      }
      cursors.set(threadId, sendBacklog(threadId, afterSeq))
      return true
    }
    if (snapshot === undefined) return false
    deps.send({ type: "snapshot", threadId, snapshot })
    cursors.set(threadId, sendBacklog(threadId, snapshot.seq))
    return true
  }

  const unsubscribe = (threadId: string): boolean => cursors.delete(threadId)

  /** A live event from the subscription. */
  const onCommitted = (stored: StoredEvent): void => {
    const threadId = stored.event.threadId
    const cursor = cursors.get(threadId)
    if (cursor === undefined || stored.threadSeq <= cursor) return
    if (stored.threadSeq === cursor + 1) {
      deps.send({ type: "event", threadId, seq: stored.threadSeq, event: stored.event })
      cursors.set(threadId, stored.threadSeq)
      return
    }
    cursors.set(threadId, sendBacklog(threadId, cursor))
  }

  return { subscribe, unsubscribe, onCommitted, subscriptions: () => cursors.size }
}

export type ThreadFeed = ReturnType<typeof makeThreadFeed>
