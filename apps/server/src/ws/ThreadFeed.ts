import { TURN_WINDOW, type ServerFrame, type ThreadId } from "@planbridge/contracts"
import { Effect, Exit, type Scope } from "effect"
import type { EventStore } from "../persistence/EventStore.ts"
import type { StoreError } from "../persistence/StoreError.ts"
import type { ThreadReads } from "../persistence/ThreadReads.ts"
import { eventFrameText, type LiveRun } from "./EventFrames.ts"
import { makeFeedFiber, type FeedFiber } from "./FeedFiber.ts"
import type { ThreadHub } from "./ThreadHub.ts"

/** Past this many missed events a resume gets a snapshot instead of the backlog. */
export const SNAPSHOT_THRESHOLD = 5_000
const PAGE = 1_000
/**
 * The first page of a backlog read. A socket that congests after a few events (a thread of
 * 1 MiB events: one 20 MiB line is about a hundred of them) would otherwise have a whole page
 * read, a handful sent and the rest dropped, at every drain: some twenty reads of 20 MiB each.
 * Pages double while they are sent whole, up to PAGE.
 */
const FIRST_PAGE = 16

/**
 * The page a catch-up reads first: once the thread's events were seen (their mean JSON length),
 * as many as the socket has room for plus the one that crosses the bound, else FIRST_PAGE. Why:
 * a big line's pieces are ~200 KB each, so a follower with 1 MiB of room took 5 of a page of 16
 * and dropped the rest, at every drain: each follower read three times what it sent, and ten
 * followers catching up on three 12 MiB lines made ~1 GB of short-lived strings, which the
 * collector let pile up on a loaded machine (436 MiB peak against the 432 MiB bound).
 */
export const firstPageOf = (room: number, meanChars: number | undefined): number =>
  meanChars === undefined ? FIRST_PAGE : Math.max(1, Math.min(PAGE, Math.ceil(room / Math.max(1, meanChars)) + 1))

/** What the feed reads: the event log and thread snapshots. */
export interface FeedReads {
  readonly events: Pick<EventStore["Service"], "readThreadJson" | "threadHead">
  readonly threads: Pick<ThreadReads["Service"], "snapshotJson">
}

export interface FeedDeps {
  readonly reads: FeedReads
  readonly send: (frame: ServerFrame) => void
  /** Sends an already serialized frame. */
  readonly sendText: (text: string) => void
  /** Writes whole WebSocket frames as they are (a live run's, EventFrames.ts) to the socket, in one write. */
  readonly sendFrames: (frames: ReadonlyArray<Buffer>) => void
  /** The socket holds more unsent bytes than it should take on: stop sending events for now. */
  readonly congested: () => boolean
  /** How many more unsent bytes the socket takes on before it is congested (0 when it is). */
  readonly room: () => number
  /** Some thread is behind: call `resume` once the socket has drained. */
  readonly onLagging: () => void
  /** Catching a thread up failed outside any command (logged): the connection cannot go on as it is. */
  readonly end: () => void
  readonly hub: Pick<ThreadHub["Service"], "listen">
}

/**
 * The threads one connection follows, and the last per-thread sequence it was sent. The
 * connection starts listening to a thread's live events before it reads its backlog, and its
 * steps (subscribing, catching up, taking a live event) run one at a time (FeedFiber.ts): so
 * every committed event is either in the backlog or delivered live afterwards, whether the
 * store's reads complete at once (SQLite) or later. Live events at or below the cursor are
 * dropped, and a gap (which would mean a missed publication) is filled from the log, never
 * passed on.
 *
 * Flow control: events are only written while the socket is not congested. A thread whose
 * events could not be written is "lagging": its live events are skipped (they are committed,
 * so in the log), and `resume` catches it up from the log once the socket has drained. So a
 * burst, or a slow reader, costs the server at most one event beyond the congestion bound per
 * connection, never a growing buffer, and never a disconnect. A live run is written as far as
 * the socket has room, plus the event that crosses the bound; the rest waits in the log.
 *
 * The feed lives as long as the scope it is made in (the connection's): closing it stops the
 * listening and interrupts the feed's fiber, with whatever step it is in.
 */
export const makeThreadFeed = (deps: FeedDeps): Effect.Effect<ThreadFeed, never, Scope.Scope> =>
  Effect.gen(function* () {
    const feed = makeFeed(deps, yield* makeFeedFiber({ doing: "catching a thread up", end: deps.end }))
    // Added after the fiber's own: so it runs first, and no live event reaches a feed being stopped.
    yield* Effect.addFinalizer(() => Effect.sync(feed.close))
    return feed.api
  })

const makeFeed = (deps: FeedDeps, steps: FeedFiber) => {
  const cursors = new Map<ThreadId, number>()
  const stopListening = new Map<ThreadId, () => void>()
  /** Per thread: the mean JSON length of the last page its backlog read (`firstPageOf`). */
  const meanChars = new Map<ThreadId, number>()
  let closed = false
  const listen = (threadId: ThreadId) => {
    if (!stopListening.has(threadId)) stopListening.set(threadId, deps.hub.listen(threadId, onCommitted))
  }
  const unlisten = (threadId: ThreadId) => {
    stopListening.get(threadId)?.()
    stopListening.delete(threadId)
    meanChars.delete(threadId)
  }

  const lagging = new Set<ThreadId>()
  const lag = (threadId: ThreadId) => {
    if (lagging.size === 0) deps.onLagging()
    lagging.add(threadId)
  }

  /** Sends the log after `after` while the socket takes it; the last sequence sent. */
  const sendBacklog = (threadId: ThreadId, after: number): Effect.Effect<number, StoreError> =>
    Effect.gen(function* () {
      let cursor = after
      for (let size = firstPageOf(deps.room(), meanChars.get(threadId)); ; size = Math.min(PAGE, size * 2)) {
        const page = yield* deps.reads.events.readThreadJson(threadId, cursor, size)
        const threadJson = JSON.stringify(threadId)
        let chars = 0
        for (const stored of page) chars += stored.eventJson.length
        if (page.length > 0) meanChars.set(threadId, chars / page.length)
        for (const stored of page) {
          if (deps.congested()) {
            lag(threadId)
            return cursor
          }
          deps.sendText(eventFrameText(threadJson, stored.threadSeq, stored.eventJson))
          cursor = stored.threadSeq
        }
        if (page.length < size) return cursor
      }
    })

  /** Sends a followed thread's log after its cursor (as it is when the step runs). */
  const catchUp = (threadId: ThreadId): Effect.Effect<void, StoreError> =>
    Effect.suspend(() => {
      const cursor = cursors.get(threadId)
      if (cursor === undefined || closed) return Effect.void
      return Effect.map(sendBacklog(threadId, cursor), (sent) => {
        if (!closed) cursors.set(threadId, sent)
      })
    })

  /** The socket drained: catch every lagging thread up from the log (or until it congests again). */
  const resume = (): void =>
    steps.run(
      Effect.suspend(() => {
        const behind = [...lagging]
        lagging.clear()
        return Effect.forEach(behind, catchUp, { discard: true })
      })
    )

  /** False when the thread does not exist; a snapshot, if one is sent, holds the latest `window` turns. */
  const subscribe = (
    threadId: ThreadId,
    afterSeq: number | undefined,
    window: number = TURN_WINDOW.default
  ): Effect.Effect<boolean, StoreError> =>
    steps.inTurn(
      Effect.suspend(() => {
        if (closed) return Effect.succeed(false)
        const wasFollowing = stopListening.has(threadId)
        // Listening first: whatever commits while the backlog is read waits behind this step.
        listen(threadId)
        return Effect.onExit(subscribeNow(threadId, afterSeq, window), (exit) =>
          Effect.sync(() => {
            if (!wasFollowing && !(Exit.isSuccess(exit) && exit.value)) unlisten(threadId)
          })
        )
      })
    )

  const subscribeNow = (
    threadId: ThreadId,
    afterSeq: number | undefined,
    window: number
  ): Effect.Effect<boolean, StoreError> =>
    Effect.gen(function* () {
      if (afterSeq !== undefined) {
        // A resume only needs the thread's high-water mark; the snapshot is built only if needed.
        const last = yield* deps.reads.events.threadHead(threadId)
        if (last === 0) return false
        if (afterSeq <= last && last - afterSeq <= SNAPSHOT_THRESHOLD) {
          cursors.set(threadId, yield* sendBacklog(threadId, afterSeq))
          return true
        }
        // A cursor from the future (another database) or too far behind: start over from a snapshot.
      }
      const snapshot = yield* deps.reads.threads.snapshotJson(threadId, window)
      if (snapshot === undefined) return false
      // The snapshot frame around the store's JSON (never parsed here), as the backlog's frames.
      deps.sendText(`{"type":"snapshot","threadId":${JSON.stringify(threadId)},"snapshot":${snapshot.json}}`)
      cursors.set(threadId, yield* sendBacklog(threadId, snapshot.seq))
      return true
    })

  /** True when the thread was followed. */
  const unsubscribe = (threadId: ThreadId): Effect.Effect<boolean> =>
    steps.inTurn(
      Effect.sync(() => {
        unlisten(threadId)
        lagging.delete(threadId)
        return cursors.delete(threadId)
      })
    )

  const close = (): void => {
    closed = true
    for (const stop of stopListening.values()) stop()
    stopListening.clear()
    cursors.clear()
    lagging.clear()
  }

  /**
   * Sends the part of a live run after the thread's cursor; true when the run shows a gap the log
   * must fill (its first event is past the one after the cursor).
   */
  const sendLive = (run: LiveRun): boolean => {
    const threadId = run.threadId
    const cursor = cursors.get(threadId)
    const { events } = run
    const first = events[0]!.threadSeq
    if (cursor === undefined || events[events.length - 1]!.threadSeq <= cursor || lagging.has(threadId)) return false
    if (first > cursor + 1) return true
    if (deps.congested()) {
      lag(threadId)
      return false
    }
    const room = deps.room()
    if (first === cursor + 1) {
      // The whole run, when it is small and the socket has room for it: one write of shared bytes.
      const whole = run.joined()
      if (whole !== undefined && whole.length <= room) {
        deps.sendFrames([whole])
        cursors.set(threadId, events[events.length - 1]!.threadSeq)
        return false
      }
    }
    // Frames up to the one that crosses the bound, as when events were written one at a time.
    const frames: Array<Buffer> = []
    let bytes = 0
    let to = cursor + 1 - first
    do {
      const frame = run.frame(to++)
      frames.push(frame)
      bytes += frame.length
    } while (to < events.length && bytes < room)
    deps.sendFrames(frames)
    cursors.set(threadId, events[to - 1]!.threadSeq)
    if (to < events.length) lag(threadId)
    return false
  }

  /** A live run of a followed thread: handled at once, or after the step in progress. */
  function onCommitted(run: LiveRun): void {
    const threadId = run.threadId
    if (steps.busy()) steps.run(Effect.suspend(() => (sendLive(run) ? catchUp(threadId) : Effect.void)))
    else if (sendLive(run)) steps.run(catchUp(threadId))
  }

  return {
    close,
    api: {
      subscribe,
      unsubscribe,
      resume,
      lagging: () => lagging.size > 0,
      subscriptions: () => cursors.size
    }
  }
}

/** One connection's thread subscriptions (`thread.subscribe` / `thread.unsubscribe`). */
export interface ThreadFeed {
  /** False when the thread does not exist; a snapshot, if one is sent, holds the latest `window` turns. */
  readonly subscribe: (
    threadId: ThreadId,
    afterSeq: number | undefined,
    window?: number
  ) => Effect.Effect<boolean, StoreError>
  /** True when the thread was followed. */
  readonly unsubscribe: (threadId: ThreadId) => Effect.Effect<boolean>
  /** The socket drained: catch every lagging thread up from the log (or until it congests again). */
  readonly resume: () => void
  /** Some thread waits for the socket to drain. */
  readonly lagging: () => boolean
  /** Threads followed. */
  readonly subscriptions: () => number
}
