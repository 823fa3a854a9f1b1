import { Effect, Layer, PubSub, Semaphore } from "effect"
import { EventStore, type StoredEvent } from "../EventStore.ts"
import { StoreError, storeFailure } from "../StoreError.ts"
import { followOtherWriters } from "./PgCommitListener.ts"
import { isConnectionLoss } from "./PgConnectionLoss.ts"
import { FencedAppend, PgEventLog } from "./PgEventLog.ts"

/**
 * `EventStore` on PostgreSQL. Several processes (replicas) may append to one database: the
 * append lock orders all their commits, and each process publishes the whole log to its
 * subscribers in that order, `seq` by `seq`, whoever wrote it. One watermark (the last `seq`
 * published) and one semaphore serve both ways an event gets here: this process's own appends
 * (which first publish what others committed since the watermark, read under the lock) and the
 * other writers' NOTIFYs (PgCommitListener.ts), which publish what lies between the watermark
 * and the announced `seq`.
 */
export const pgEventStore = Layer.effect(
  EventStore,
  Effect.gen(function* () {
    const log = yield* PgEventLog
    const committed = yield* PubSub.unbounded<StoredEvent>()
    const publishing = yield* Semaphore.make(1)
    /** The last `seq` published: subscribers hear of events committed from the store's start on. */
    let published = yield* Effect.tryPromise({
      try: () => log.lastSeq(),
      catch: storeFailure("unavailable", "read the event log")
    })
    const publish = (events: ReadonlyArray<StoredEvent>) =>
      Effect.suspend(() => {
        const fresh = events.filter((stored) => stored.seq > published)
        if (fresh.length === 0) return Effect.void
        published = fresh[fresh.length - 1]!.seq
        return PubSub.publishAll(committed, fresh)
      })

    /** Publishes what other writers committed up to `upToSeq` (a NOTIFY's last `seq`). */
    const catchUp = (upToSeq: number) =>
      publishing.withPermits(1)(
        Effect.suspend(() =>
          upToSeq <= published
            ? Effect.void
            : Effect.tryPromise({
                try: () => log.readRange(published, upToSeq),
                catch: storeFailure("read", "read other replicas' events")
              }).pipe(Effect.flatMap(publish))
        )
      )
    yield* followOtherWriters(catchUp)

    const appendBatch: EventStore["Service"]["appendBatch"] = (events, beforeAppend, json, fences) =>
      publishing.withPermits(1)(
        Effect.suspend(() =>
          Effect.tryPromise({
            try: () => log.appendBatch(events, beforeAppend, published, json, fences),
            // A lost database is `unavailable` (ingestion holds the events and tries again); a
            // fenced append or any other refusal is final.
            catch: (cause) =>
              cause instanceof FencedAppend
                ? new StoreError({ reason: "fenced", message: `cannot append events: ${cause.message}` })
                : storeFailure(isConnectionLoss(cause) ? "unavailable" : "write", "append events")(cause)
          })
        ).pipe(
          Effect.tap(({ results, earlier }) => {
            const stored: Array<StoredEvent> = [...earlier]
            for (const result of results) if (result.stored !== undefined) stored.push(result.stored)
            return publish(stored)
          }),
          Effect.map(({ results }) => results)
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
