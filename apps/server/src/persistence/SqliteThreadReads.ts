import { Effect, Layer } from "effect"
import { Database } from "./Database.ts"
import { storeFailure } from "./StoreError.ts"
import { threadReadsWith } from "./ThreadReads.ts"
import { readThreadHistoryJson, readThreadSnapshotJson } from "./ThreadSnapshotJson.ts"
import { readThreadSnapshot } from "./ThreadSnapshots.ts"

/**
 * `ThreadReads` on SQLite: snapshots are synchronous reads of the one connection (so a snapshot
 * is consistent) through statements prepared on it; the rest as on every engine (ThreadReads.ts).
 */
export const sqliteThreadReads = Layer.unwrap(
  Effect.gen(function* () {
    const { db } = yield* Database
    return threadReadsWith({
      snapshot: (threadId) =>
        Effect.try({
          try: () => readThreadSnapshot(db, threadId),
          catch: storeFailure("read", `read the snapshot of thread ${threadId}`)
        }),
      snapshotJson: (threadId, turns) =>
        Effect.try({
          try: () => readThreadSnapshotJson(db, threadId, turns),
          catch: storeFailure("read", `read the snapshot of thread ${threadId}`)
        }),
      historyJson: (threadId, before, limit) =>
        Effect.try({
          try: () => readThreadHistoryJson(db, threadId, before, limit),
          catch: storeFailure("read", `read the history of thread ${threadId}`)
        })
    })
  })
)
