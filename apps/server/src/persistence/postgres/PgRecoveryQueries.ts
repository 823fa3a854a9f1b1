import { eq, ne } from "drizzle-orm"
import { Effect, Layer } from "effect"
import { RecoveryQueries } from "../RecoveryQueries.ts"
import { storeFailure } from "../StoreError.ts"
import { PgDatabase } from "./PgDatabase.ts"
import { prompts, requests, threads, turns } from "./schema.ts"

/** `RecoveryQueries` on PostgreSQL: the same four reads of the projections as SQLite's. */
export const pgRecoveryQueries = Layer.effect(
  RecoveryQueries,
  Effect.gen(function* () {
    const { db } = yield* PgDatabase
    const unfinished = Effect.tryPromise({
      try: async () => ({
        prompts: await db
          .select({
            promptId: prompts.promptId,
            threadId: prompts.threadId,
            turnId: prompts.turnId,
            provider: prompts.provider
          })
          .from(prompts)
          .where(eq(prompts.status, "pending")),
        requests: await db
          .select({
            requestId: requests.requestId,
            threadId: requests.threadId,
            turnId: requests.turnId,
            provider: threads.provider
          })
          .from(requests)
          .innerJoin(threads, eq(threads.threadId, requests.threadId))
          .where(eq(requests.status, "pending")),
        turns: await db
          .select({ threadId: turns.threadId, turnId: turns.turnId, provider: threads.provider })
          .from(turns)
          .innerJoin(threads, eq(threads.threadId, turns.threadId))
          .where(eq(turns.status, "inProgress")),
        sessions: await db
          .select({ threadId: threads.threadId, provider: threads.provider, lastSeq: threads.lastSeq })
          .from(threads)
          .where(ne(threads.state, "stopped"))
      }),
      catch: storeFailure("read", "read what is still pending")
    })
    return RecoveryQueries.of({ unfinished })
  })
)
