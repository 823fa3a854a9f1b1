import { Effect, Queue, Schema, type Scope } from "effect"
import type pg from "pg"
import { storeFailure, type StoreError } from "../StoreError.ts"
import { PgDatabase } from "./PgDatabase.ts"
import { EVENTS_CHANNEL, PgEventLog, type ThreadRange } from "./PgEventLog.ts"

/** What an append transaction announces: who wrote it, and each thread's first and last `thread_seq`. */
const Announcement = Schema.fromJsonString(
  Schema.Struct({
    o: Schema.String,
    t: Schema.Array(Schema.Tuple([Schema.String, Schema.Finite, Schema.Finite]))
  })
)
const decodeAnnouncement = Schema.decodeUnknownOption(Announcement)

/** Thread ranges other writers have committed; `reconnect`: the LISTEN connection was lost. */
type Signal = { readonly ranges: ReadonlyArray<ThreadRange> } | "reconnect"

/** How long a lost LISTEN connection waits before it connects again. */
const RECONNECT_DELAY = "1 second"

/**
 * Hears what other processes (replicas) commit to the same database: a LISTEN connection of its
 * own takes their NOTIFYs (in commit order; each names the threads' `thread_seq` ranges of one
 * append) and one fiber hands the announced ranges to `catchUp`, which publishes the committed
 * rows of each thread up to them. This process's own announcements are skipped (its appends
 * publish themselves). A lost connection is replaced, and the threads this process follows are
 * caught up at once (`catchUpKnown`); a failed read only delays events until the thread's next
 * announcement or append, and a client's feed fills any gap from the log on its thread's next
 * event (ws/ThreadFeed.ts).
 */
export const followOtherWriters = (
  catchUp: (ranges: ReadonlyArray<ThreadRange>) => Effect.Effect<void, StoreError>,
  catchUpKnown: Effect.Effect<void, StoreError>
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
          Queue.offerUnsafe(signals, { ranges: announced.value.t })
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
      // Whatever the followed threads committed while nobody listened.
      yield* catchUpKnown
    }).pipe(Effect.catch(() => Queue.offer(signals, "reconnect")))
    // Announcements that piled up while a read ran are served by one read, each thread up to its newest.
    const step = Effect.gen(function* () {
      const pending = yield* Queue.takeAll(signals)
      if (pending.includes("reconnect")) return yield* reconnect
      const ranges = new Map<string, [number, number]>()
      for (const signal of pending) {
        if (signal === "reconnect") continue
        for (const [threadId, first, last] of signal.ranges) {
          const range = ranges.get(threadId)
          if (range === undefined) ranges.set(threadId, [first, last])
          else ranges.set(threadId, [Math.min(range[0], first), Math.max(range[1], last)])
        }
      }
      yield* catchUp([...ranges].map(([threadId, [first, last]]): ThreadRange => [threadId, first, last])).pipe(
        Effect.ignore
      )
    })
    yield* Effect.forkScoped(Effect.forever(step))
  })
