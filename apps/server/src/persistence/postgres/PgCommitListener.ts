import { Effect, Queue, Schema, Scheduler, type Scope } from "effect"
import type pg from "pg"
import { storeFailure, type StoreError } from "../StoreError.ts"
import { PgDatabase } from "./PgDatabase.ts"
import { EVENTS_CHANNEL, PgEventLog, type ThreadRange } from "./PgEventLog.ts"

/**
 * What an append transaction announces: who wrote it, each thread's first and last `thread_seq`,
 * and, when they fit the payload, the events themselves (PgAppendScript.ts, `announce`).
 */
const Announcement = Schema.fromJsonString(
  Schema.Struct({
    o: Schema.String,
    t: Schema.Array(Schema.Tuple([Schema.String, Schema.Finite, Schema.Finite])),
    e: Schema.optionalKey(
      Schema.Array(
        Schema.Tuple([
          Schema.Finite,
          Schema.String,
          Schema.Finite,
          Schema.Finite,
          Schema.String,
          Schema.NullOr(Schema.String)
        ])
      )
    )
  })
)
const decodeAnnouncement = Schema.decodeUnknownOption(Announcement)

/** A committed row as an announcement carries it: not decoded yet (only followed threads' are). */
export interface CarriedRow {
  readonly seq: number
  readonly threadId: string
  readonly threadSeq: number
  readonly schemaVersion: number
  readonly event: string
  readonly raw: string | null
}

/**
 * Thread ranges other writers have committed, with their rows when the announcement carried
 * them; `reconnect`: the LISTEN connection was lost.
 */
type Signal =
  { readonly ranges: ReadonlyArray<ThreadRange>; readonly rows: ReadonlyArray<CarriedRow> | undefined } | "reconnect"

/** The dispatcher of the announcements' queue (see `signals`). */
const SIGNALS_SCHEDULER = new Scheduler.MixedScheduler("sync")

/** How often the LISTEN connection takes a snapshot (see `confirmed`). */
const SNAPSHOT_EVERY = "1 second"

/** How long a lost LISTEN connection waits before it connects again. */
const RECONNECT_DELAY = "1 second"

/**
 * Hears what other processes (replicas) commit to the same database: a LISTEN connection of its
 * own takes their NOTIFYs (in commit order; each names the threads' `thread_seq` ranges of one
 * append, and carries its rows when they fit) and one fiber hands the announced ranges to
 * `catchUp`, which publishes the committed rows of each thread up to them (the carried rows, or
 * else rows read back). This process's own announcements are skipped (its appends
 * publish themselves). A lost connection is replaced, and what every thread committed since the
 * connection's last confirmed snapshot is caught up at once (`catchUpSince`); a failed read only delays events until the thread's next
 * announcement or append, and a client's feed fills any gap from the log on its thread's next
 * event (ws/ThreadFeed.ts).
 */
export const followOtherWriters = (
  catchUp: (
    ranges: ReadonlyArray<ThreadRange>,
    rows: ReadonlyArray<CarriedRow> | undefined
  ) => Effect.Effect<void, StoreError>,
  catchUpSince: (snapshot: string) => Effect.Effect<void, StoreError>
): Effect.Effect<void, StoreError, PgDatabase | PgEventLog | Scope.Scope> =>
  Effect.gen(function* () {
    const database = yield* PgDatabase
    const log = yield* PgEventLog
    // Wakes the fiber below as soon as the notification's handler returns (a microtask), not at
    // `setImmediate` after every other I/O callback of the loop iteration (RuntimeIngestion.ts's
    // writer does the same).
    const signals = yield* Queue.unbounded<Signal>().pipe(Effect.provideService(Scheduler.Scheduler, SIGNALS_SCHEDULER))
    /**
     * How this process's own announcements begin (PgEventLog.ts writes the origin first): they are
     * dropped before any decoding, each of this process's appends sends one. Should the format
     * change, they are still dropped by their decoded origin below.
     */
    const ownPrefix = `{"o":${JSON.stringify(log.origin)},`
    let listener: pg.Client | undefined
    /**
     * Snapshots (`pg_snapshot` as text) taken on the LISTEN connection: `latest`, and `confirmed`,
     * the one before it. The NOTIFYs of every transaction visible in `confirmed` were sent on the
     * connection before the answer that made it `confirmed` (PostgreSQL 14+ passes on what a
     * backend was notified of before its ReadyForQuery, and a second later the commits visible in
     * the older snapshot have long signalled it), so they were heard: after a lost connection,
     * what committed since `confirmed` is all that can have been missed.
     */
    let latest: string | undefined
    let confirmed: string | undefined
    const takeSnapshot = async (client: pg.Client) => {
      const { rows } = await client.query<{ s: string }>("select pg_current_snapshot()::text as s")
      if (listener !== client) return
      confirmed = latest
      latest = rows[0]!.s
    }

    const listen = Effect.tryPromise({
      try: async () => {
        const client = await database.connect()
        client.on("notification", (message) => {
          if (message.channel !== EVENTS_CHANNEL || message.payload === undefined) return
          if (message.payload.startsWith(ownPrefix)) return
          const announced = decodeAnnouncement(message.payload)
          if (announced._tag === "None" || announced.value.o === log.origin) return
          const carried = announced.value.e
          Queue.offerUnsafe(signals, {
            ranges: announced.value.t,
            rows: carried?.map(([seq, threadId, threadSeq, schemaVersion, event, raw]) => ({
              seq,
              threadId,
              threadSeq,
              schemaVersion,
              event,
              raw
            }))
          })
        })
        client.on("error", () => undefined)
        client.on("end", () => {
          if (listener === client) Queue.offerUnsafe(signals, "reconnect")
        })
        await client.query(`listen ${EVENTS_CHANNEL}`)
        listener = client
        latest = undefined
        await takeSnapshot(client)
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
      const since = confirmed ?? latest
      yield* Effect.sleep(RECONNECT_DELAY)
      yield* listen
      // Whatever was committed while nobody listened, before any announcement heard since.
      if (since !== undefined) yield* catchUpSince(since)
      confirmed = latest
    }).pipe(Effect.catch(() => Queue.offer(signals, "reconnect")))
    // Announcements that piled up while a read ran are served by one read, each thread up to its
    // newest; when every one of them carried its rows, by none.
    const step = Effect.gen(function* () {
      const pending = yield* Queue.takeAll(signals)
      if (pending.includes("reconnect")) return yield* reconnect
      const ranges = new Map<string, [number, number]>()
      let rows: Array<CarriedRow> | undefined = []
      for (const signal of pending) {
        if (signal === "reconnect") continue
        if (signal.rows === undefined) rows = undefined
        else rows?.push(...signal.rows)
        for (const [threadId, first, last] of signal.ranges) {
          const range = ranges.get(threadId)
          if (range === undefined) ranges.set(threadId, [first, last])
          else ranges.set(threadId, [Math.min(range[0], first), Math.max(range[1], last)])
        }
      }
      yield* catchUp(
        [...ranges].map(([threadId, [first, last]]): ThreadRange => [threadId, first, last]),
        rows
      ).pipe(Effect.ignore)
    })
    yield* Effect.forkScoped(Effect.forever(step))
    // A snapshot a second: what a lost connection makes this process read again is about that old.
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.sleep(SNAPSHOT_EVERY).pipe(
          Effect.andThen(
            Effect.promise(async () => {
              if (listener !== undefined) await takeSnapshot(listener).catch(() => undefined)
            })
          )
        )
      )
    )
  })
