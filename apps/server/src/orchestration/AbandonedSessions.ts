import { Effect, PubSub, type Scope } from "effect"
import type { LiveSession } from "./LiveSessions.ts"
import type { RuntimeIngestion } from "./RuntimeIngestion.ts"

/**
 * Ends the live sessions whose events ingestion gave up after the store's outage bound
 * (RuntimeIngestion.ts, `STORE_OUTAGE_BOUND_MS`): a session must not go on as if its provider's
 * output had been recorded while a hole was left in its thread. Its provider is stopped (its
 * scope closed, its lease released); its exit is recorded like any other once the store takes
 * events again, or else by the recovery of the next start or take-over.
 */
export const endAbandonedSessions = (deps: {
  readonly ingestion: RuntimeIngestion["Service"]
  readonly live: ReadonlyMap<string, Pick<LiveSession, "scope">>
  readonly retire: (threadId: string, scope: LiveSession["scope"]) => Effect.Effect<void>
}): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const abandoned = yield* deps.ingestion.abandoned
    const end = (threadId: string) =>
      Effect.suspend(() => {
        const found = deps.live.get(threadId)
        if (found === undefined) return Effect.void
        return Effect.logError(
          `thread ${threadId}: its session is ended: the store stayed unavailable past the outage bound, ` +
            "and what its provider sent meanwhile could not be recorded"
        ).pipe(Effect.andThen(deps.retire(threadId, found.scope)))
      })
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(PubSub.take(abandoned), end)))
  })
