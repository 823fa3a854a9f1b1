import type { ThreadId } from "@planbridge/contracts"
import { and, eq } from "drizzle-orm"
import { Effect, Layer } from "effect"
import { storeFailure } from "../StoreError.ts"
import { ThreadReads } from "../ThreadReads.ts"
import { PgDatabase } from "./PgDatabase.ts"
import { listPgThreads, readPgThreadSummary, setPgThreadArchived } from "./PgThreadSummaries.ts"
import { readPgThreadHistoryJson, readPgThreadSnapshot, readPgThreadSnapshotJson } from "./PgThreadSnapshots.ts"
import { threads, turns } from "./schema.ts"

/** `ThreadReads` on PostgreSQL; a snapshot is read in one REPEATABLE READ transaction. */
export const pgThreadReads = Layer.effect(
  ThreadReads,
  Effect.gen(function* () {
    const { pool, db } = yield* PgDatabase
    const snapshot = (threadId: ThreadId) =>
      Effect.tryPromise({
        try: () => readPgThreadSnapshot(pool, db, threadId),
        catch: storeFailure("read", `read the snapshot of thread ${threadId}`)
      })
    return ThreadReads.of({
      snapshot,
      snapshotJson: (threadId, turns) =>
        Effect.tryPromise({
          try: () => readPgThreadSnapshotJson(pool, db, threadId, turns),
          catch: storeFailure("read", `read the snapshot of thread ${threadId}`)
        }),
      historyJson: (threadId, before, limit) =>
        Effect.tryPromise({
          try: () => readPgThreadHistoryJson(pool, threadId, before, limit),
          catch: storeFailure("read", `read the history of thread ${threadId}`)
        }),
      list: (isLive) =>
        Effect.tryPromise({ try: () => listPgThreads(db, isLive), catch: storeFailure("read", "list threads") }),
      summary: (threadId, isLive) =>
        Effect.tryPromise({
          try: () => readPgThreadSummary(db, threadId, isLive),
          catch: storeFailure("read", `read thread ${threadId}`)
        }),
      setArchived: (threadId, at) =>
        Effect.tryPromise({
          try: () => setPgThreadArchived(db, threadId, at),
          catch: storeFailure("write", `archive thread ${threadId}`)
        }),
      exists: (threadId) =>
        Effect.tryPromise({
          try: async () =>
            (await db.select({ threadId: threads.threadId }).from(threads).where(eq(threads.threadId, threadId)))
              .length > 0,
          catch: storeFailure("read", `read thread ${threadId}`)
        }),
      runningTurn: (threadId) =>
        Effect.tryPromise({
          try: async () =>
            (
              await db
                .select({ turnId: turns.turnId })
                .from(turns)
                .where(and(eq(turns.threadId, threadId), eq(turns.status, "inProgress")))
                .limit(1)
            )[0]?.turnId,
          catch: storeFailure("read", `read the turns of thread ${threadId}`)
        })
    })
  })
)
