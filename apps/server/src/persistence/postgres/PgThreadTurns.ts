import { Deferred, Effect } from "effect"

/**
 * Runs effects in turn per thread: an effect naming threads waits for every effect named earlier
 * that shares one of them, and for nothing else. So one process's appends of different threads
 * are in flight at once (each on its own pooled connection), while a thread's appends (and their
 * publishing) keep the order they were called in. The turn is taken at once for all the effect's
 * threads, in one synchronous step, so each effect waits only for effects taken before it: the
 * waits cannot form a cycle. What is remembered is one entry per thread with an effect waiting or
 * running; it is removed when the thread's last such effect ends.
 */
export const makeThreadTurns = () => {
  /** Per thread, the end of the last effect that took a turn on it. */
  const last = new Map<string, Deferred.Deferred<void>>()

  return <A, E, R>(threadIds: Iterable<string>, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.uninterruptibleMask((restore) => {
      const threads = [...new Set(threadIds)]
      const done = Deferred.makeUnsafe<void>()
      const before = new Set<Deferred.Deferred<void>>()
      for (const threadId of threads) {
        const previous = last.get(threadId)
        if (previous !== undefined) before.add(previous)
        last.set(threadId, done)
      }
      const waitForEarlier = Effect.forEach(before, Deferred.await, { discard: true })
      // Whoever waits for this effect also waits for the effects it waited for: an effect
      // interrupted while it waited lets nothing after it overtake what came before it.
      const release = Effect.sync(() => {
        for (const threadId of threads) if (last.get(threadId) === done) last.delete(threadId)
        Deferred.doneUnsafe(done, waitForEarlier)
      })
      return restore(Effect.andThen(waitForEarlier, effect)).pipe(Effect.ensuring(release))
    })
}
