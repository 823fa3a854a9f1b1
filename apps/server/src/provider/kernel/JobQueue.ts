import { Deferred, Effect, Queue, type Scope } from "effect"

/**
 * A session's serialiser: jobs run one at a time, in the order they were queued, on one fiber
 * of the session's scope, so that a mapping's state and the order of emitted events are never
 * interleaved. Jobs come from plain Node callbacks (a transport's lines, its exit) and from
 * commands that wait for their result.
 */
export interface JobQueue {
  /** Queues a job without waiting; it runs after every job queued before it. */
  readonly enqueue: (job: Effect.Effect<void>) => void
  /** Runs `effect` as a job and waits for its outcome. */
  readonly exclusive: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>
  /**
   * Starts running jobs, in the session's scope (until then they wait: callbacks may queue jobs
   * before the session is wired up). A job that dies is logged with `label`; later jobs still run.
   */
  readonly start: Effect.Effect<void, never, Scope.Scope>
}

export const makeJobQueue = Effect.fn("JobQueue.make")(function* (label: string) {
  // Unbounded as a queue, bounded in use: transports hand on lines only while fewer than
  // INBOUND_QUEUE_LINES wait to be taken (each frees its place when its job runs).
  const jobs = yield* Queue.unbounded<Effect.Effect<void>>()
  const runJob = Effect.flatten(Queue.take(jobs)).pipe(
    Effect.catchCause((cause) => Effect.logError(`${label}: job failed`, cause))
  )
  const queue: JobQueue = {
    enqueue: (job) => {
      Queue.offerUnsafe(jobs, job)
    },
    exclusive: <A, E>(effect: Effect.Effect<A, E>) =>
      Effect.gen(function* () {
        const done = yield* Deferred.make<A, E>()
        yield* Queue.offer(
          jobs,
          Effect.exit(effect).pipe(
            Effect.flatMap((exit) => Deferred.done(done, exit)),
            Effect.asVoid
          )
        )
        return yield* Deferred.await(done)
      }),
    start: Effect.asVoid(Effect.forkScoped(Effect.forever(runJob)))
  }
  return queue
})
