import { and, eq } from "drizzle-orm"
import { Effect, Layer } from "effect"
import { Database } from "./Database.ts"
import { storeFailure } from "./StoreError.ts"
import { ThreadReads } from "./ThreadReads.ts"
import { readThreadHistoryJson, readThreadSnapshotJson } from "./ThreadSnapshotJson.ts"
import { readThreadSnapshot } from "./ThreadSnapshots.ts"
import { listThreads, readThreadSummary, setThreadArchived } from "./ThreadSummaries.ts"
import { threads, turns } from "./schema.ts"

/** `ThreadReads` on SQLite: synchronous reads of the one connection, so a snapshot is consistent. */
export const sqliteThreadReads = Layer.effect(
  ThreadReads,
  Effect.gen(function* () {
    const { db } = yield* Database
    return ThreadReads.of({
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
        }),
      list: (isLive) => Effect.try({ try: () => listThreads(db, isLive), catch: storeFailure("read", "list threads") }),
      summary: (threadId, isLive) =>
        Effect.try({
          try: () => readThreadSummary(db, threadId, isLive),
          catch: storeFailure("read", `read thread ${threadId}`)
        }),
      setArchived: (threadId, at) =>
        Effect.try({
          try: () => setThreadArchived(db, threadId, at),
          catch: storeFailure("write", `archive thread ${threadId}`)
        }),
      exists: (threadId) =>
        Effect.try({
          try: () =>
            db.select({ threadId: threads.threadId }).from(threads).where(eq(threads.threadId, threadId)).get() !==
            undefined,
          catch: storeFailure("read", `read thread ${threadId}`)
        }),
      runningTurn: (threadId) =>
        Effect.try({
          try: () =>
            db
              .select({ turnId: turns.turnId })
              .from(turns)
              .where(and(eq(turns.threadId, threadId), eq(turns.status, "inProgress")))
              .get()?.turnId,
          catch: storeFailure("read", `read the turns of thread ${threadId}`)
        })
    })
  })
)
