import { Effect, Fiber, PubSub } from "effect"
import type { EventStore, StoredEvent } from "../persistence/EventStore.ts"
import { liveRunsOf, type LiveRun } from "./EventFrames.ts"

/** A followed thread's live events, a run at a time (EventFrames.ts). */
export type ThreadListener = (run: LiveRun) => void

/**
 * A thread's followers are written at most once per this many milliseconds. A thread that was
 * quiet that long is written at once; what a hot thread commits sooner waits for the rest of the
 * interval and goes out with whatever else the thread commits by then, in one write per follower.
 *
 * Why (issue 31, item 5): the agent's lines arrive one at a time, so a thread streaming 1,000
 * lines a second commits 1,000 times a second, and each commit cost one socket write per
 * follower: with 200 followers, 200,000 `write` calls a second, the largest part of the server's
 * time, which left it too little headroom to absorb a pause (a GC, a busy core) without queuing.
 * 2 ms halves those writes at 1,000 lines a second and costs an event at most 2 ms; the bare
 * broadcast the bench compares with writes once per 1 ms timer tick.
 */
export const FAN_OUT_INTERVAL_MS = 2

/**
 * ... and a thread's fan-out makes at most this many follower writes a second: a thread with more
 * than 100 followers is written less often than every 2 ms (200 followers: every 4 ms; 1,000:
 * every 20 ms). Each write is a system call that also runs the loopback's (or the NIC's) send
 * path: profiled (issue 31, item 5; 200 followers, 1,000 lines a second), `writev` was 37 % of
 * the server's time and the server used a whole core, so any pause queued the stream for
 * hundreds of milliseconds. The bound keeps the fan-out's cost per second the same however many
 * follow, at the price of a longer wait for a thread that many follow.
 */
export const FAN_OUT_WRITES_PER_SECOND = 50_000

/** How long a thread with `followers` followers waits between two writes of them (ms). */
export const fanOutIntervalMs = (followers: number): number =>
  Math.max(FAN_OUT_INTERVAL_MS, (followers * 1_000) / FAN_OUT_WRITES_PER_SECOND)

/**
 * One subscription to committed events for the whole server, fanned out by thread to the
 * connections that follow it. With one subscription per connection, every connection would
 * look at every event of every thread; here each event costs only its own subscribers. What the
 * subscription holds is handed on in runs of one thread's consecutive events, whose wire bytes
 * are made once for all its followers: a follower costs one write per run, not one per event.
 */
export const startThreadHub = async (store: Pick<EventStore["Service"], "subscribe" | "followOnly">) => {
  /** The store reads other replicas' events back only for the threads followed here (PgEventStore.ts). */
  const follows = store.followOnly?.()
  /** Each followed thread's follow, ended with its last listener. */
  const following = new Map<string, () => void>()
  const listeners = new Map<string, Set<ThreadListener>>()
  /** Connections that follow the thread list: every thread's runs. */
  const everyThread = new Set<ThreadListener>()
  /** The same connections, told of list changes that are no event (an archive): the thread's id. */
  const listChanges = new Set<(threadId: string) => void>()
  /** When each followed thread's followers were last written to (performance.now()). */
  const lastFanOut = new Map<string, number>()
  /** Events of hot threads waiting for their interval to end; each has a fiber that will send them. */
  const held = new Map<string, Array<StoredEvent>>()

  /** Hands a thread's events (in order) to its followers. */
  const fanOut = (threadId: string, events: ReadonlyArray<StoredEvent>): void => {
    const set = listeners.get(threadId)
    if (set === undefined) return
    lastFanOut.set(threadId, performance.now())
    for (const run of liveRunsOf(events)) for (const listener of set) listener(run)
  }

  const intervalOf = (threadId: string) => fanOutIntervalMs(listeners.get(threadId)?.size ?? 0)

  /** Sends what a thread held once its interval is over (a timer may fire up to a millisecond early). */
  const sendHeld = (threadId: string): Effect.Effect<void> =>
    Effect.suspend(() => {
      const waitMs = intervalOf(threadId) - (performance.now() - (lastFanOut.get(threadId) ?? 0))
      if (waitMs > 0) return Effect.andThen(Effect.sleep(waitMs), sendHeld(threadId))
      const events = held.get(threadId)
      held.delete(threadId)
      if (events !== undefined) fanOut(threadId, events)
      return Effect.void
    })

  /** A batch of committed events (any threads, commit order), each thread's in order. */
  const take = (batch: ReadonlyArray<StoredEvent>) =>
    Effect.gen(function* () {
      // The thread list's followers get every run at once: a list is not a hot thread's stream.
      if (everyThread.size > 0) for (const run of liveRunsOf(batch)) for (const listener of everyThread) listener(run)
      const byThread = new Map<string, Array<StoredEvent>>()
      for (const stored of batch) {
        const threadId = stored.event.threadId
        if (!listeners.has(threadId)) continue
        const events = byThread.get(threadId) ?? byThread.set(threadId, []).get(threadId)!
        events.push(stored)
      }
      const now = performance.now()
      for (const [threadId, events] of byThread) {
        const waiting = held.get(threadId)
        if (waiting !== undefined) {
          waiting.push(...events)
          continue
        }
        const sinceLast = now - (lastFanOut.get(threadId) ?? Number.NEGATIVE_INFINITY)
        if (sinceLast >= intervalOf(threadId)) {
          fanOut(threadId, events)
          continue
        }
        held.set(threadId, events)
        yield* Effect.forkChild(sendHeld(threadId))
      }
    })

  let ready = (): void => {}
  const subscribed = new Promise<void>((resolve) => (ready = resolve))
  const fiber = Effect.runFork(
    Effect.scoped(
      Effect.gen(function* () {
        const subscription = yield* store.subscribe
        ready()
        for (;;) yield* take(yield* PubSub.takeAll(subscription))
      })
    )
  )
  await subscribed
  return {
    /** Events committed from now on reach `listener`; earlier ones are in the log. */
    listen: (threadId: string, listener: ThreadListener): (() => void) => {
      const set = listeners.get(threadId) ?? listeners.set(threadId, new Set()).get(threadId)!
      if (follows !== undefined && !following.has(threadId)) following.set(threadId, follows.follow(threadId))
      set.add(listener)
      return () => {
        set.delete(listener)
        if (set.size > 0) return
        listeners.delete(threadId)
        lastFanOut.delete(threadId)
        following.get(threadId)?.()
        following.delete(threadId)
      }
    },
    /** Every thread's events committed from now on reach `listener` (the thread list's feed). */
    listenAll: (listener: ThreadListener): (() => void) => {
      const follow = follows?.followEvery()
      everyThread.add(listener)
      return () => {
        everyThread.delete(listener)
        follow?.()
      }
    },
    /** A thread's list entry changed without an event (`thread.archive`): its id reaches `listener`. */
    listenListChanges: (listener: (threadId: string) => void): (() => void) => {
      listChanges.add(listener)
      return () => listChanges.delete(listener)
    },
    /** Tells this server's list followers that a thread's entry changed without an event. */
    listChanged: (threadId: string): void => {
      for (const listener of [...listChanges]) listener(threadId)
    },
    stop: () => Effect.runPromise(Fiber.interrupt(fiber)).catch(() => undefined)
  }
}

export type ThreadHub = Awaited<ReturnType<typeof startThreadHub>>
