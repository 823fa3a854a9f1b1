import { Cause, Context, Effect, Layer, PubSub, type Scope } from "effect"
import { EventStore, type StoredEvent } from "../persistence/EventStore.ts"
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

/**
 * ... and a hot thread's fan-out holds the event loop at most a third of the time: its interval is
 * at least FAN_OUT_LOOP_SHARE⁻¹ times what its fan-outs have been taking (smoothed), up to
 * FAN_OUT_MAX_INTERVAL_MS. Why (issue 31, item 5, round 4): a follower write costs ~9–13 µs of CPU
 * on loopback (the kernel's send path runs the receiver's side too), so at 50,000 writes a second
 * the fan-out of one thread alone took 0.45–0.65 of a core, and with ingestion's own work the
 * server's one core was 90–95 % busy: every pause (a GC, a WAL checkpoint, a busy core) queued the
 * stream for hundreds of milliseconds, with 5–10 % of a core left to catch up. What a write costs
 * depends on the machine, so the interval follows what the fan-outs take here, not a figure taken
 * on one machine. Measured on the loop's clock, not as the process's CPU time: that counts the
 * other threads' work too (V8's compilers and concurrent GC; 0.1–1.9 ms over a fan-out of one
 * listener that took a few µs), and the loop's time is what ingestion waits for.
 */
export const FAN_OUT_LOOP_SHARE = 1 / 3
/** The longest a thread's followers wait for the loop share's sake (the writes bound may say longer). */
export const FAN_OUT_MAX_INTERVAL_MS = 50
/** How much of its smoothed fan-out time a thread's newest fan-out makes up (an exponential average). */
const COST_WEIGHT = 0.25

/**
 * How long a thread with `followers` followers, whose fan-outs have been taking `fanOutMs` each,
 * waits between two writes of them (ms).
 */
export const fanOutIntervalMs = (followers: number, fanOutMs = 0): number =>
  Math.max(
    FAN_OUT_INTERVAL_MS,
    (followers * 1_000) / FAN_OUT_WRITES_PER_SECOND,
    Math.min(FAN_OUT_MAX_INTERVAL_MS, fanOutMs / FAN_OUT_LOOP_SHARE)
  )

/** What connections follow through the hub (ThreadFeed.ts, ThreadListFeed.ts). */
export interface ThreadHubService {
  /** Events committed from now on reach `listener`; earlier ones are in the log. Returns the unfollow. */
  readonly listen: (threadId: string, listener: ThreadListener) => () => void
  /** Every thread's events committed from now on reach `listener` (the thread list's feed). */
  readonly listenAll: (listener: ThreadListener) => () => void
  /** A thread's list entry changed without an event (`thread.archive`): its id reaches `listener`. */
  readonly listenListChanges: (listener: (threadId: string) => void) => () => void
  /** Tells this server's list followers that a thread's entry changed without an event. */
  readonly listChanged: (threadId: string) => void
}

/**
 * One subscription to committed events for the whole server, fanned out by thread to the
 * connections that follow it. With one subscription per connection, every connection would
 * look at every event of every thread; here each event costs only its own subscribers. What the
 * subscription holds is handed on in runs of one thread's consecutive events, whose wire bytes
 * are made once for all its followers: a follower costs one write per run, not one per event.
 *
 * The hub's fiber takes the subscription in the scope it is made in (the server's layer) and is
 * interrupted when that scope closes; the events it holds for a hot thread are then dropped.
 */
export class ThreadHub extends Context.Service<ThreadHub, ThreadHubService>()("planbridge/ThreadHub") {
  /** The server's hub, over its event store; subscribed once the layer is built. */
  static readonly layer: Layer.Layer<ThreadHub, never, EventStore> = Layer.effect(
    ThreadHub,
    Effect.gen(function* () {
      return yield* makeThreadHub(yield* EventStore)
    })
  )
}

/** The hub over `store`, subscribed when this returns; stopped when the scope closes. */
export const makeThreadHub = (
  store: Pick<EventStore["Service"], "subscribe" | "followOnly">,
  /** The clock fan-outs are measured by (ms). */
  clockMs: () => number = () => performance.now()
): Effect.Effect<ThreadHubService, never, Scope.Scope> =>
  Effect.gen(function* () {
    const hub = makeFanOut(store, clockMs)
    // Added first, so it runs last: after the fiber is interrupted, nothing is held any more.
    yield* Effect.addFinalizer(() => Effect.sync(hub.dropHeld))
    const subscription = yield* store.subscribe
    yield* Effect.forkScoped(
      Effect.gen(function* () {
        for (;;) hub.take(yield* PubSub.takeAll(subscription))
      }).pipe(
        // A listener that throws would end the fan-out for every connection: said, never silent.
        Effect.tapCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.void
            : Effect.logError("the thread hub stopped: no connection gets live events any more", cause)
        )
      ),
      { startImmediately: true }
    )
    return hub.service
  })

/** The hub's state and its fan-out: plain functions and timers (the hot path has no fiber). */
const makeFanOut = (store: Pick<EventStore["Service"], "followOnly">, clockMs: () => number) => {
  /** The store reads other replicas' events back only for the threads followed here (PgEventStore.ts). */
  const follows = store.followOnly?.()
  /** Each followed thread's follow, ended with its last listener. */
  const following = new Map<string, () => void>()
  const listeners = new Map<string, Set<ThreadListener>>()
  /** Connections that follow the thread list: every thread's runs. */
  const everyThread = new Set<ThreadListener>()
  /** The same connections, told of list changes that are no event (an archive): the thread's id. */
  const listChanges = new Set<(threadId: string) => void>()
  /** Per followed thread: when its followers were last written to (performance.now()), and what its fan-outs take (ms, smoothed). */
  const fanOuts = new Map<string, { at: number; tookMs: number }>()
  /** Events of hot threads waiting for their interval to end, and the timer that will send them. */
  const held = new Map<string, { events: Array<StoredEvent>; timer: ReturnType<typeof setTimeout> }>()

  /** Hands a thread's events (in order) to its followers. */
  const fanOut = (threadId: string, events: ReadonlyArray<StoredEvent>): void => {
    const set = listeners.get(threadId)
    if (set === undefined) return
    const at = performance.now()
    const before = clockMs()
    for (const run of liveRunsOf(events)) for (const listener of set) listener(run)
    const took = clockMs() - before
    const last = fanOuts.get(threadId)
    fanOuts.set(threadId, { at, tookMs: last === undefined ? took : last.tookMs + COST_WEIGHT * (took - last.tookMs) })
  }

  /** How long from now until the thread's interval is over (≤ 0: it is). */
  const waitOf = (threadId: string, now: number): number => {
    const last = fanOuts.get(threadId)
    if (last === undefined) return 0
    return fanOutIntervalMs(listeners.get(threadId)?.size ?? 0, last.tookMs) - (now - last.at)
  }

  /** Sends what a thread held once its interval is over (a timer may fire up to a millisecond early). */
  const sendHeld = (threadId: string): void => {
    const waiting = held.get(threadId)
    if (waiting === undefined) return
    const waitMs = waitOf(threadId, performance.now())
    if (waitMs > 0) {
      waiting.timer = setTimeout(sendHeld, waitMs, threadId)
      return
    }
    held.delete(threadId)
    fanOut(threadId, waiting.events)
  }

  /** A batch of committed events (any threads, commit order), each thread's in order. */
  const take = (batch: ReadonlyArray<StoredEvent>): void => {
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
        waiting.events.push(...events)
        continue
      }
      const waitMs = waitOf(threadId, now)
      if (waitMs <= 0) {
        fanOut(threadId, events)
        continue
      }
      // A plain timer, not a fiber: this is the hot path of a hot thread, a few hundred times a second.
      held.set(threadId, { events, timer: setTimeout(sendHeld, waitMs, threadId) })
    }
  }

  const service: ThreadHubService = {
    listen: (threadId, listener) => {
      const set = listeners.get(threadId) ?? listeners.set(threadId, new Set()).get(threadId)!
      if (follows !== undefined && !following.has(threadId)) following.set(threadId, follows.follow(threadId))
      set.add(listener)
      return () => {
        set.delete(listener)
        if (set.size > 0) return
        listeners.delete(threadId)
        fanOuts.delete(threadId)
        clearTimeout(held.get(threadId)?.timer)
        held.delete(threadId)
        following.get(threadId)?.()
        following.delete(threadId)
      }
    },
    listenAll: (listener) => {
      const follow = follows?.followEvery()
      everyThread.add(listener)
      return () => {
        everyThread.delete(listener)
        follow?.()
      }
    },
    listenListChanges: (listener) => {
      listChanges.add(listener)
      return () => void listChanges.delete(listener)
    },
    listChanged: (threadId) => {
      for (const listener of [...listChanges]) listener(threadId)
    }
  }

  const dropHeld = (): void => {
    for (const { timer } of held.values()) clearTimeout(timer)
    held.clear()
  }

  return { take, service, dropHeld }
}
