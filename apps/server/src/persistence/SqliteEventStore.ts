import { Effect, Layer, PubSub } from "effect"
import { EventStore, type StoredEvent } from "./EventStore.ts"
import { SqliteEventLog } from "./SqliteEventLog.ts"
import { storeFailure } from "./StoreError.ts"

/**
 * `EventStore` on SQLite. better-sqlite3 is synchronous and the connection is the only writer,
 * so an append is one transaction run to its commit before anything else happens, and
 * publishing right after it is publishing after commit. Reads complete synchronously: a step of
 * a connection's WebSocket feed runs start to end on its fiber, with no wait (ws/FeedFiber.ts).
 */
export const sqliteEventStore = Layer.effect(
  EventStore,
  Effect.gen(function* () {
    const log = yield* SqliteEventLog
    const committed = yield* PubSub.unbounded<StoredEvent>()

    const appendBatch: EventStore["Service"]["appendBatch"] = (events, beforeAppend, json) =>
      Effect.suspend(() => {
        let results
        try {
          results = log.appendBatch(events, beforeAppend, json)
        } catch (cause) {
          return Effect.fail(storeFailure("write", "append events")(cause))
        }
        const stored: Array<StoredEvent> = []
        for (const result of results) if (result.stored !== undefined) stored.push(result.stored)
        if (stored.length === 0) return Effect.succeed(results)
        return Effect.as(PubSub.publishAll(committed, stored), results)
      })

    return EventStore.of({
      appendBatch,
      readThread: (threadId, afterThreadSeq, limit) =>
        Effect.try({
          try: () => log.readThread(threadId, afterThreadSeq, limit),
          catch: storeFailure("read", `read thread ${threadId}`)
        }),
      readThreadJson: (threadId, afterThreadSeq, limit) =>
        Effect.try({
          try: () => log.readThreadJson(threadId, afterThreadSeq, limit),
          catch: storeFailure("read", `read thread ${threadId}`)
        }),
      readAll: (afterSeq, limit) =>
        Effect.try({ try: () => log.readAll(afterSeq, limit), catch: storeFailure("read", "read the event log") }),
      threadHead: (threadId) =>
        Effect.try({ try: () => log.threadHead(threadId), catch: storeFailure("read", `read thread ${threadId}`) }),
      subscribe: PubSub.subscribe(committed)
    })
  })
)
