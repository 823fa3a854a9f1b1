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
  /** The socket holds more unsent bytes than it should take on: stop sending events for now. */
  readonly congested: () => boolean
  /** Some thread is behind: call `resume` once the socket has drained. */
  readonly onLagging: () => void
  readonly hub: ThreadHub
}

/**
 * The threads one connection follows, and the last per-thread sequence it was sent. The
 * connection starts listening to a thread's live events and reads its backlog in one
 * synchronous step (better-sqlite3 reads, buffered sends), so every committed event is either
 * in the backlog or delivered live afterwards; live events at or below the cursor are dropped,
 * and a gap (which would mean a missed publication) is filled from the log, never passed on.
 *
 * Flow control: events are only written while the socket is not congested. A thread whose
 * events could not be written is "lagging": its live events are skipped (they are committed,
 * so in the log), and `resume` catches it up from the log once the socket has drained. So a
 * burst, or a slow reader, costs the server at most one event beyond the congestion bound per
 * connection, never a growing buffer, and never a disconnect.
 */
export const makeThreadFeed = (deps: FeedDeps) => {
  const cursors = new Map<string, number>()
  const stopListening = new Map<string, () => void>()
  const listen = (threadId: string) => {
    if (!stopListening.has(threadId)) stopListening.set(threadId, deps.hub.listen(threadId, onCommitted))
  }

  const lagging = new Set<string>()
  const lag = (threadId: string) => {
    if (lagging.size === 0) deps.onLagging()
    lagging.add(threadId)
  }

  /** Sends the log after `after` while the socket takes it; returns the last sequence sent. */
  const sendBacklog = (threadId: ThreadId, after: number): number => {
    let cursor = after
    for (;;) {
      const page = deps.readThread(threadId, cursor, PAGE)
      for (const stored of page) {
        if (deps.congested()) {
          lag(threadId)
          return cursor
        }
        deps.sendText(liveFrameText(stored))
        cursor = stored.threadSeq
      }
      if (page.length < PAGE) return cursor
    }
  }

  /** The socket drained: catch every lagging thread up from the log (or until it congests again). */
  const resume = (): void => {
    const behind = [...lagging]
    lagging.clear()
    for (const threadId of behind) {
      const cursor = cursors.get(threadId)
      if (cursor !== undefined) cursors.set(threadId, sendBacklog(threadId as ThreadId, cursor))
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
    lagging.delete(threadId)
    return cursors.delete(threadId)
  }

  const close = (): void => {
    for (const stop of stopListening.values()) stop()
    stopListening.clear()
    cursors.clear()
    lagging.clear()
  }

  /** A live event of a followed thread. */
  function onCommitted(stored: StoredEvent): void {
    const threadId = stored.event.threadId
    const cursor = cursors.get(threadId)
    if (cursor === undefined || stored.threadSeq <= cursor || lagging.has(threadId)) return
    if (deps.congested()) return lag(threadId)
    if (stored.threadSeq === cursor + 1) {
      deps.sendText(liveFrameText(stored))
      cursors.set(threadId, stored.threadSeq)
      return
    }
    cursors.set(threadId, sendBacklog(threadId, cursor))
  }

  return { subscribe, unsubscribe, close, resume, lagging: () => lagging.size > 0, subscriptions: () => cursors.size }
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
