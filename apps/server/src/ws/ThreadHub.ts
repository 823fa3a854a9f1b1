import { Effect, Fiber, PubSub } from "effect"
import type { EventStore } from "../persistence/EventStore.ts"
import { liveRunsOf, type LiveRun } from "./EventFrames.ts"

/** A followed thread's live events, a run at a time (EventFrames.ts). */
export type ThreadListener = (run: LiveRun) => void

/**
 * One subscription to committed events for the whole server, fanned out by thread to the
 * connections that follow it. With one subscription per connection, every connection would
 * look at every event of every thread; here each event costs only its own subscribers. What the
 * subscription holds is handed on in runs of one thread's consecutive events, whose wire bytes
 * are made once for all its followers: a follower costs one write per run, not one per event.
 */
export const startThreadHub = async (store: Pick<EventStore["Service"], "subscribe">) => {
  const listeners = new Map<string, Set<ThreadListener>>()
  /** Connections that follow the thread list: every thread's runs. */
  const everyThread = new Set<ThreadListener>()
  let ready = (): void => {}
  const subscribed = new Promise<void>((resolve) => (ready = resolve))
  const fiber = Effect.runFork(
    Effect.scoped(
      Effect.gen(function* () {
        const subscription = yield* store.subscribe
        ready()
        for (;;) {
          const batch = yield* PubSub.takeAll(subscription)
          for (const run of liveRunsOf(batch)) {
            const set = listeners.get(run.threadId)
            if (set !== undefined) for (const listener of set) listener(run)
            for (const listener of everyThread) listener(run)
          }
        }
      })
    )
  )
  await subscribed
  return {
    /** Events committed from now on reach `listener`; earlier ones are in the log. */
    listen: (threadId: string, listener: ThreadListener): (() => void) => {
      const set = listeners.get(threadId) ?? listeners.set(threadId, new Set()).get(threadId)!
      set.add(listener)
      return () => {
        set.delete(listener)
        if (set.size === 0) listeners.delete(threadId)
      }
    },
    /** Every thread's events committed from now on reach `listener` (the thread list's feed). */
    listenAll: (listener: ThreadListener): (() => void) => {
      everyThread.add(listener)
      return () => everyThread.delete(listener)
    },
    stop: () => Effect.runPromise(Fiber.interrupt(fiber)).catch(() => undefined)
  }
}

export type ThreadHub = Awaited<ReturnType<typeof startThreadHub>>
