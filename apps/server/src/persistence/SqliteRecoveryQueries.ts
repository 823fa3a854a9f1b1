import { eq, ne } from "drizzle-orm"
import { Effect, Layer } from "effect"
import { Database } from "./Database.ts"
import { RecoveryQueries } from "./RecoveryQueries.ts"
import { storeFailure } from "./StoreError.ts"
import { prompts, requests, threads, turns } from "./schema.ts"

/** `RecoveryQueries` on SQLite: four reads of the projections. */
export const sqliteRecoveryQueries = Layer.effect(
  RecoveryQueries,
  Effect.gen(function* () {
    const { db } = yield* Database
    const unfinished = Effect.try({
      try: () => ({
        prompts: db
          .select({
            promptId: prompts.promptId,
            threadId: prompts.threadId,
            turnId: prompts.turnId,
            provider: prompts.provider
          })
          .from(prompts)
          .where(eq(prompts.status, "pending"))
          .all(),
        requests: db
          .select({
            requestId: requests.requestId,
            threadId: requests.threadId,
            turnId: requests.turnId,
            provider: threads.provider
          })
          .from(requests)
          .innerJoin(threads, eq(threads.threadId, requests.threadId))
          .where(eq(requests.status, "pending"))
          .all(),
        turns: db
          .select({ threadId: turns.threadId, turnId: turns.turnId, provider: threads.provider })
          .from(turns)
          .innerJoin(threads, eq(threads.threadId, turns.threadId))
          .where(eq(turns.status, "inProgress"))
          .all(),
        sessions: db
          .select({ threadId: threads.threadId, provider: threads.provider, lastSeq: threads.lastSeq })
          .from(threads)
          .where(ne(threads.state, "stopped"))
          .all()
      }),
      catch: storeFailure("read", "read what is still pending")
    })
    return RecoveryQueries.of({ unfinished })
  })
)
