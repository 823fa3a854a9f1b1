import { Effect, Queue, Schema, type Scope } from "effect"
import type pg from "pg"
import { storeFailure, type StoreError } from "../StoreError.ts"
import { PgDatabase } from "./PgDatabase.ts"
import { EVENTS_CHANNEL, PgEventLog } from "./PgEventLog.ts"

/** What an append transaction announces: who wrote it, and its first and last `seq`. */
const Announcement = Schema.fromJsonString(Schema.Struct({ o: Schema.String, f: Schema.Finite, l: Schema.Finite }))
const decodeAnnouncement = Schema.decodeUnknownOption(Announcement)

/** Up to which `seq` other writers have committed; `reconnect`: the LISTEN connection was lost. */
type Signal = { readonly upToSeq: number } | "reconnect"

/** How long a lost LISTEN connection waits before it connects again. */
const RECONNECT_DELAY = "1 second"

/**
 * Hears what other processes (replicas) commit to the same database: a LISTEN connection of its
 * own takes their NOTIFYs (one per append transaction, in commit order) and one fiber hands
 * each announced `seq` to `catchUp`, which publishes the committed rows up to it. This process's
 * own announcements are skipped (its appends publish themselves). A lost connection is replaced,
 * and what was committed meanwhile is caught up at once; a failed read only delays events until
 * the next announcement or append, and a client's feed fills any gap from the log on its thread's
 * next event (ws/ThreadFeed.ts).
 */
export const followOtherWriters = (
  catchUp: (upToSeq: number) => Effect.Effect<void, StoreError>
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
          Queue.offerUnsafe(signals, { upToSeq: announced.value.l })
        })
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

    const reconnect = Effect.gen(function* () {
      listener = undefined
      yield* Effect.sleep(RECONNECT_DELAY)
      yield* listen
      // Whatever was committed while nobody listened.
      const last = yield* Effect.tryPromise({ try: () => log.lastSeq(), catch: storeFailure("read", "read the log") })
      yield* Queue.offer(signals, { upToSeq: last })
    }).pipe(Effect.catch(() => Queue.offer(signals, "reconnect")))
    // Announcements that piled up while a read ran are served by one read, up to the newest.
    const step = Effect.gen(function* () {
      const pending = yield* Queue.takeAll(signals)
      if (pending.includes("reconnect")) return yield* reconnect
      let upToSeq = 0
      for (const signal of pending) if (signal !== "reconnect") upToSeq = Math.max(upToSeq, signal.upToSeq)
      yield* catchUp(upToSeq).pipe(Effect.ignore)
    })
    yield* Effect.forkScoped(Effect.forever(step))
  })
