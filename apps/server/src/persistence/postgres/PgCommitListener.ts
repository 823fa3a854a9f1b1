import { Effect, PubSub, Queue, Schema, type Scope } from "effect"
import type pg from "pg"
import type { StoredEvent } from "../EventStore.ts"
import { storeFailure, type StoreError } from "../StoreError.ts"
import { PgDatabase } from "./PgDatabase.ts"
import { EVENTS_CHANNEL, PgEventLog } from "./PgEventLog.ts"

/** What an append transaction announces: who wrote it, and its first and last `seq`. */
const Announcement = Schema.fromJsonString(Schema.Struct({ o: Schema.String, f: Schema.Finite, l: Schema.Finite }))
const decodeAnnouncement = Schema.decodeUnknownOption(Announcement)

type Signal = { readonly first: number; readonly last: number } | "reconnect"

/** How long a lost LISTEN connection waits before it connects again. */
const RECONNECT_DELAY = "1 second"

/**
 * Publishes the events that other processes (replicas) commit to the same database: one LISTEN
 * connection of its own takes their NOTIFYs (one per append transaction, in commit order), and
 * one fiber reads each announced `seq` range back from the committed rows and publishes it, in
 * order. This process's own announcements are skipped: its appends publish themselves. A
 * notification lost (the connection dropped, a failed read) only delays those events: a client's
 * feed fills a gap from the log when its thread's next event arrives (ws/ThreadFeed.ts).
 */
export const followOtherWriters = (
  committed: PubSub.PubSub<StoredEvent>
): Effect.Effect<void, StoreError, PgDatabase | PgEventLog | Scope.Scope> =>
  Effect.gen(function* () {
    const database = yield* PgDatabase
    const log = yield* PgEventLog
    const signals = yield* Queue.unbounded<Signal>()
    let listener: pg.Client | undefined

    const listen = Effect.tryPromise({
      try: async () => {
        const client = await database.connect()
        client.on("notification", (message) => {
          if (message.channel !== EVENTS_CHANNEL || message.payload === undefined) return
          const announced = decodeAnnouncement(message.payload)
          if (announced._tag === "None" || announced.value.o === log.origin) return
          Queue.offerUnsafe(signals, { first: announced.value.f, last: announced.value.l })
        })
        // A dropped connection is replaced; what was announced meanwhile reaches clients as gaps filled.
        client.on("error", () => undefined)
        client.on("end", () => {
          if (listener === client) Queue.offerUnsafe(signals, "reconnect")
        })
        await client.query(`listen ${EVENTS_CHANNEL}`)
        listener = client
      },
      catch: storeFailure("unavailable", "listen for other replicas' commits")
    })
    const unlisten = Effect.promise(async () => {
      const client = listener
      listener = undefined
      await client?.end().catch(() => undefined)
    })

    yield* Effect.acquireRelease(listen, () => unlisten)
    const step = Effect.gen(function* () {
      const signal = yield* Queue.take(signals)
      if (signal === "reconnect") {
        listener = undefined
        yield* Effect.sleep(RECONNECT_DELAY)
        yield* listen.pipe(Effect.catch(() => Queue.offer(signals, "reconnect")))
        return
      }
      const events = yield* Effect.tryPromise(() => log.readRange(signal.first, signal.last)).pipe(
        Effect.catch(() => Effect.succeed([]))
      )
      if (events.length > 0) yield* PubSub.publishAll(committed, events)
    })
    yield* Effect.forkScoped(Effect.forever(step))
  })
