import { Effect, Layer, PubSub, Semaphore } from "effect"
import { EventStore, type StoredEvent } from "../EventStore.ts"
import { storeFailure } from "../StoreError.ts"
import { PgEventLog } from "./PgEventLog.ts"
import { followOtherWriters } from "./PgCommitListener.ts"

/**
 * `EventStore` on PostgreSQL. Appends of this process run one at a time (a semaphore around the
 * transaction and the publish after it), so its own events are published in commit order;
 * appends of other processes on the same database (replicas) are serialised with these by the
 * append lock, and reach `subscribe` through their NOTIFY (PgCommitListener.ts).
 */
export const pgEventStore = Layer.effect(
  EventStore,
  Effect.gen(function* () {
    const log = yield* PgEventLog
    const committed = yield* PubSub.unbounded<StoredEvent>()
    const appending = yield* Semaphore.make(1)
    yield* followOtherWriters(committed)

    const appendBatch: EventStore["Service"]["appendBatch"] = (events, beforeAppend) =>
      appending.withPermits(1)(
        Effect.tryPromise({
          try: () => log.appendBatch(events, beforeAppend),
          catch: storeFailure("write", "append events")
        }).pipe(
          Effect.tap((results) => {
            const stored: Array<StoredEvent> = []
            for (const result of results) if (result.stored !== undefined) stored.push(result.stored)
            return stored.length === 0 ? Effect.void : PubSub.publishAll(committed, stored)
          })
        )
      )

    return EventStore.of({
      appendBatch,
      readThread: (threadId, afterThreadSeq, limit) =>
        Effect.tryPromise({
          try: () => log.readThread(threadId, afterThreadSeq, limit),
          catch: storeFailure("read", `read thread ${threadId}`)
        }),
      readThreadJson: (threadId, afterThreadSeq, limit) =>
        Effect.tryPromise({
          try: () => log.readThreadJson(threadId, afterThreadSeq, limit),
          catch: storeFailure("read", `read thread ${threadId}`)
        }),
      readAll: (afterSeq, limit) =>
        Effect.tryPromise({
          try: () => log.readAll(afterSeq, limit),
          catch: storeFailure("read", "read the event log")
        }),
      threadHead: (threadId) =>
        Effect.tryPromise({
          try: () => log.threadHead(threadId),
          catch: storeFailure("read", `read thread ${threadId}`)
        }),
      subscribe: PubSub.subscribe(committed)
    })
  })
)
