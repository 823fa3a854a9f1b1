import type { ServerFrame, ThreadId } from "@planbridge/contracts"
import type { Db } from "../persistence/Database.ts"
import type { StoredEvent } from "../persistence/EventStore.ts"
import { lastThreadSeq, readThreadSnapshot } from "../persistence/ThreadSnapshots.ts"
import type { ThreadHub } from "./ThreadHub.ts"

/** Past this many missed events a resume gets a snapshot instead of the backlog. */
export const SNAPSHOT_THRESHOLD = 5_000
const PAGE = 1_000

export interface FeedDeps {
  readonly db: Db
  readonly readThread: (threadId: ThreadId, afterThreadSeq: number, limit: number) => ReadonlyArray<StoredEvent>
  readonly send: (frame: ServerFrame) => void
  /** Sends an already serialized frame. */
  readonly sendText: (text: string) => void
  readonly hub: ThreadHub
}

/**
 * The threads one connection follows, and the last per-thread sequence it was sent. The
 * connection starts listening to a thread's live events and reads its backlog in one
 * synchronous step (better-sqlite3 reads, buffered sends), so every committed event is either
 * in the backlog or delivered live afterwards; live events at or below the cursor are dropped,
 * and a gap (which would mean a missed publication) is filled from the log, never passed on.
 */
export const makeThreadFeed = (deps: FeedDeps) => {
  const cursors = new Map<string, number>()
  const stopListening = new Map<string, () => void>()
  const listen = (threadId: string) => {
    if (!stopListening.has(threadId)) stopListening.set(threadId, deps.hub.listen(threadId, onCommitted))
  }

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
    const found = subscribeNow(threadId, afterSeq)
    if (found) listen(threadId)
    return found
  }

  const subscribeNow = (threadId: ThreadId, afterSeq: number | undefined): boolean => {
    if (afterSeq !== undefined) {
      // A resume only needs the thread's high-water mark; the snapshot is built only if needed.
      const last = lastThreadSeq(deps.db, threadId)
      if (last === 0) return false
      if (afterSeq <= last && last - afterSeq <= SNAPSHOT_THRESHOLD) {
        cursors.set(threadId, sendBacklog(threadId, afterSeq))
        return true
      }
      // A cursor from the future (another database) or too far behind: start over from a snapshot.
    }
    const snapshot = readThreadSnapshot(deps.db, threadId)
    if (snapshot === undefined) return false
    deps.send({ type: "snapshot", threadId, snapshot })
    cursors.set(threadId, sendBacklog(threadId, snapshot.seq))
    return true
  }

  const unsubscribe = (threadId: string): boolean => {
    stopListening.get(threadId)?.()
    stopListening.delete(threadId)
    return cursors.delete(threadId)
  }

  const close = (): void => {
    for (const stop of stopListening.values()) stop()
    stopListening.clear()
    cursors.clear()
  }

  /** A live event of a followed thread. */
  function onCommitted(stored: StoredEvent): void {
    const threadId = stored.event.threadId
    const cursor = cursors.get(threadId)
    if (cursor === undefined || stored.threadSeq <= cursor) return
    if (stored.threadSeq === cursor + 1) {
      deps.sendText(liveFrameText(stored))
      cursors.set(threadId, stored.threadSeq)
      return
    }
    cursors.set(threadId, sendBacklog(threadId, cursor))
  }

  return { subscribe, unsubscribe, close, subscriptions: () => cursors.size }
}

export type ThreadFeed = ReturnType<typeof makeThreadFeed>

/** A live event goes to every follower of its thread: serialize its frame once, not per connection. */
const frameTexts = new WeakMap<StoredEvent, string>()
const liveFrameText = (stored: StoredEvent): string => {
  let text = frameTexts.get(stored)
  if (text === undefined) {
    const frame: ServerFrame = { type: "event", threadId: stored.event.threadId, seq: stored.threadSeq, event: stored.event }
    text = JSON.stringify(frame)
    frameTexts.set(stored, text)
  }
  return text
}
