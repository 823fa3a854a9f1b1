import { Deferred, Effect, Queue, Scheduler, type Scope } from "effect"

/**
 * Wakes a feed's fiber in a microtask, not after the event loop's next `setImmediate` phase: a
 * step queued by a live event or a command runs as soon as the code that queued it yields (as
 * RuntimeIngestion's writer is woken).
 */
const MICROTASK_SCHEDULER = new Scheduler.MixedScheduler("sync")

/** One connection feed's steps, run one at a time and in order by a fiber of its own. */
export interface FeedFiber {
  /** Queues a step nobody waits for; if it fails, the failure is logged and `end` is called. */
  readonly run: (step: Effect.Effect<void, unknown>) => void
  /** The effect's outcome once every step queued before it has run and it has (a command's step). */
  readonly inTurn: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>
  /** A step is queued or running: what happens now must be queued behind it to keep the order. */
  readonly busy: () => boolean
}

export interface FeedFiberOptions {
  /** What the feed's steps do, for the log line of a failure ("catching a thread up"). */
  readonly doing: string
  /** A step nobody waits for failed (after the server's logger has the cause): the connection must end. */
  readonly end: () => void
}

/**
 * A connection feed's fiber, forked in the scope it is made in (the connection's: closing the
 * socket closes it, and so does the server's runtime when it stops) and interrupted with it.
 * Steps are handed to it through a queue, so they run one at a time in the order they were
 * queued, whether a step completes at once (SQLite's reads) or waits (PostgreSQL's): no two
 * steps ever see the feed's state half-changed. The feed runs a live event inline, with no step
 * and no hop, while its fiber is idle (`busy()` false): the hot path costs what a direct call does.
 *
 * A failed step no command waits for is logged through the server's logger (this fiber runs in
 * its runtime) and ends the connection (`end`); the fiber then takes no further step. A command's
 * step (`inTurn`) hands its failure to the command, whose error frame says it. When the scope
 * closes, commands still waiting for their turn are interrupted, never left hanging.
 */
export const makeFeedFiber = (options: FeedFiberOptions): Effect.Effect<FeedFiber, never, Scope.Scope> =>
  Effect.gen(function* () {
    const steps = yield* Queue.unbounded<Effect.Effect<void>>().pipe(
      Effect.provideService(Scheduler.Scheduler, MICROTASK_SCHEDULER)
    )
    /** Steps queued and not yet done. */
    let pending = 0
    /** The fiber has stopped (a failed step, the scope closed): nothing runs any more. */
    let stopped = false
    /** Commands whose step has not run yet, each interrupted by its function if the feed stops first. */
    const waiting = new Set<() => void>()
    const stop = Effect.sync(() => {
      stopped = true
      Queue.shutdownUnsafe(steps)
      for (const interrupt of waiting) interrupt()
      waiting.clear()
    })
    // Added before the fiber is forked, so it runs after the fiber has been interrupted.
    yield* Effect.addFinalizer(() => stop)

    yield* Effect.forkScoped(
      Effect.gen(function* () {
        for (;;) {
          const step = yield* Queue.take(steps)
          yield* step
          pending--
        }
      }).pipe(Effect.ensuring(stop)),
      { startImmediately: true }
    )

    const enqueue = (step: Effect.Effect<void>): void => {
      pending++
      if (!Queue.offerUnsafe(steps, step)) pending--
    }

    const run = (step: Effect.Effect<void, unknown>): void =>
      enqueue(
        Effect.catchCause(step, (cause) =>
          Effect.logError(`${options.doing} failed: the connection is closed`, cause).pipe(
            Effect.andThen(Effect.sync(options.end)),
            Effect.andThen(stop),
            Effect.andThen(Effect.interrupt)
          )
        )
      )

    const inTurn = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
      Effect.suspend(() => {
        const done = Deferred.makeUnsafe<A, E>()
        const interrupt = (): void => void Deferred.doneUnsafe(done, Effect.interrupt)
        if (stopped) interrupt()
        else waiting.add(interrupt)
        enqueue(
          Effect.flatMap(Effect.exit(effect), (exit) =>
            Effect.sync(() => {
              waiting.delete(interrupt)
              Deferred.doneUnsafe(done, exit)
            })
          )
        )
        return Deferred.await(done)
      })

    return { run, inTurn, busy: () => stopped || pending > 0 }
  })
