import { Effect, Layer } from "effect"
import { storeFailure } from "../StoreError.ts"
import { threadReadsWith } from "../ThreadReads.ts"
import { PgDatabase } from "./PgDatabase.ts"
import { readPgThreadHistoryJson, readPgThreadSnapshot, readPgThreadSnapshotJson } from "./PgThreadSnapshots.ts"

/**
 * `ThreadReads` on PostgreSQL: a snapshot is read in one REPEATABLE READ transaction (all its
 * tables as of one commit); the rest as on every engine (../ThreadReads.ts).
 */
export const pgThreadReads = Layer.unwrap(
  Effect.gen(function* () {
    const { pool, db } = yield* PgDatabase
    return threadReadsWith({
      snapshot: (threadId) =>
        Effect.tryPromise({
          try: () => readPgThreadSnapshot(pool, db, threadId),
          catch: storeFailure("read", `read the snapshot of thread ${threadId}`)
        }),
      snapshotJson: (threadId, turns) =>
        Effect.tryPromise({
          try: () => readPgThreadSnapshotJson(pool, db, threadId, turns),
          catch: storeFailure("read", `read the snapshot of thread ${threadId}`)
        }),
      historyJson: (threadId, before, limit) =>
        Effect.tryPromise({
          try: () => readPgThreadHistoryJson(pool, threadId, before, limit),
          catch: storeFailure("read", `read the history of thread ${threadId}`)
        })
    })
  })
)
