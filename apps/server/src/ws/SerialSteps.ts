import { Deferred, Effect } from "effect"

/**
 * Runs a connection's feed steps one at a time, in the order they were handed in. A step that
 * completes synchronously (every read of the SQLite store does) runs inline, before `run`
 * returns, so the feed does exactly what straight-line code would; a step that waits (a store
 * whose reads are asynchronous) holds back the steps after it until it is done, so no two steps
 * ever see the feed's state half-changed.
 */
export const makeSerialSteps = () => {
  const waiting: Array<Effect.Effect<void>> = []
  let busy = false

  const drain = (): void => {
    for (;;) {
      const next = waiting.shift()
      if (next === undefined) {
        busy = false
        return
      }
      const fiber = Effect.runFork(next)
      // `runFork` starts the fiber at once: a synchronous step has already finished here.
      if (fiber.pollUnsafe() === undefined) {
        fiber.addObserver(drain)
        return
      }
    }
  }

  /** Queues a step; runs it (and what queued behind it) now unless a step is in progress. */
  const run = (step: Effect.Effect<void>): void => {
    waiting.push(step)
    if (busy) return
    busy = true
    drain()
  }

  /** The effect's outcome, once its turn has come and it has run. */
  const inTurn = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Effect.suspend(() => {
      const done = Deferred.makeUnsafe<A, E>()
      run(Effect.flatMap(Effect.exit(effect), (exit) => Effect.asVoid(Deferred.done(done, exit))))
      return Deferred.await(done)
    })

  return { run, inTurn, busy: (): boolean => busy }
}
