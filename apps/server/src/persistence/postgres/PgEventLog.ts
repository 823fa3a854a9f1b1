import type { RuntimeEvent, ThreadId } from "@planbridge/contracts"
import { Context, Effect, Layer, Schema } from "effect"
import type pg from "pg"
import { eventJsonOf, type EventJson } from "../EventJson.ts"
import type { AppendLookup, AppendResult, BeforeAppend, StoredEvent, StoredEventJson } from "../EventStore.ts"
import {
  CURRENT_EVENT_SCHEMA_VERSION,
  decodePersistedEvent,
  parsePersistedEvent,
  persistedEventJson
} from "../PersistedEvent.ts"
import { makeProjectorOn } from "../Projector.ts"
import type { LeaseFences } from "../SessionLeases.ts"
import { storeFailure } from "../StoreError.ts"
import { decodePromptJson } from "../StoredPrompt.ts"
import { PgDatabase } from "./PgDatabase.ts"
import { preparePgProjectionStatements } from "./PgProjectionStatements.ts"
import { beginAppend, type AppendLoad } from "./PgAppendLoad.ts"
import { intArray, literal, textArray } from "./PgLiteral.ts"
import { makePgProjectionSink } from "./PgProjectionSink.ts"

/**
 * The key of the transaction-level advisory lock every append takes first: appends from all
 * replicas run one at a time, so `seq` (a bigserial, drawn inside the lock) is in commit order and
 * a reader after a cursor never skips an event that commits later with a smaller one, and each
 * thread's head read under it is the one the next `thread_seq` follows.
 */
export const APPEND_LOCK = 0x706c_676c // "plgl"
/** The channel of the one NOTIFY each append transaction sends: `{"o": origin, "f": first seq, "l": last seq}`. */
export const EVENTS_CHANNEL = "planbridge_events"

/** An append refused by the lease check: the store error's reason is `fenced`. */
export class FencedAppend extends Schema.TaggedError<FencedAppend>()("FencedAppend", { message: Schema.String }) {}

interface EventRow {
  seq: number
  threadSeq: number
  schemaVersion: number
  event: string
  raw: string | null
}
/** An event of the batch to insert, with its sequence in its thread and its stored JSON. */
interface EventRowToInsert {
  readonly event: RuntimeEvent
  readonly threadSeq: number
  readonly json: EventJson
}
const COLUMNS = `seq, thread_seq as "threadSeq", schema_version as "schemaVersion", event, raw`

/**
 * The event log and its projections on PostgreSQL, one transaction per batch under the append
 * lock: the duplicates, thread heads and what the projector and `beforeAppend` read are loaded
 * by one select, the batch is folded in memory exactly as SQLite's (SqliteEventLog.ts, the same
 * projector), and the events' INSERT, the projections and one NOTIFY follow in one script; all of
 * it or nothing. Its functions reject with what node-postgres throws.
 */
export const makePgEventLog = (database: PgDatabase["Service"], origin: string) => {
  const { pool } = database
  const sink = makePgProjectionSink(preparePgProjectionStatements(database.db))
  const projector = makeProjectorOn(sink.statements)
  /** The projection statements each pooled connection has prepared (PgProjectionSink.scriptWrites). */
  const prepared = new WeakMap<pg.PoolClient, Set<string>>()
  const preparedOn = (client: pg.PoolClient): Set<string> =>
    prepared.get(client) ?? prepared.set(client, new Set()).get(client)!

  /**
   * The fence of each thread of the batch, checked against its lease row as read under the
   * append lock and `for share` (PgAppendLoad.ts): the row stays as read until this transaction
   * commits, so a take-over (`claim` updates the row) waits for the commit and follows it in the
   * log. An append that proves a lease (`fences`) commits only while the row still names this
   * replica with that fence, unexpired by the database's clock at the check; one that proves
   * none only while no other replica holds the thread live.
   */
  const checkLeases = (
    batch: ReadonlyArray<RuntimeEvent>,
    leases: AppendLoad["leases"],
    fences: LeaseFences | undefined
  ) => {
    for (const threadId of new Set(batch.map((event) => event.threadId))) {
      const lease = leases.get(threadId)
      const proved = fences?.get(threadId)
      if (proved === undefined) {
        if (lease !== undefined && lease.live && lease.owner !== origin)
          throw new FencedAppend({ message: `thread ${threadId}: another replica holds its session lease` })
        continue
      }
      const lost =
        lease === undefined || lease.owner !== origin
          ? "it was taken over or released"
          : lease.fence !== proved
            ? `it was claimed again, fence ${lease.fence}`
            : lease.live
              ? undefined
              : "it expired"
      if (lost !== undefined)
        throw new FencedAppend({
          message: `thread ${threadId}: this replica's session lease (fence ${proved}) is lost: ${lost}`
        })
    }
  }

  /**
   * Appends a batch in two round trips: `beginAppend` (begin, lock, and one select of all it
   * needs), then, once the batch is folded in memory, one script: the events' INSERT, every
   * projection write, the NOTIFY and the COMMIT. `publishedSeq` is the last `seq` this process
   * has published: the events other writers committed after it are read under the lock (all
   * final there, since appends run one at a time) and returned as `earlier`, to be published
   * before the batch's own. `fences`: the leases the batch's writer holds (checkLeases).
   */
  const appendBatch = async (
    batch: ReadonlyArray<RuntimeEvent>,
    beforeAppend: BeforeAppend | undefined,
    publishedSeq: number,
    batchJson?: ReadonlyArray<EventJson>,
    fences?: LeaseFences
  ): Promise<{ readonly results: ReadonlyArray<AppendResult>; readonly earlier: ReadonlyArray<StoredEvent> }> => {
    const client = await pool.connect()
    let broken: Error | undefined
    try {
      const loaded = await beginAppend(client, APPEND_LOCK, batch, publishedSeq)
      checkLeases(batch, loaded.leases, fences)
      sink.load(loaded.projection)
      // Prompts requested earlier in this batch, as stored, for `beforeAppend` (the first one wins, as in the projection).
      const promptsInBatch = new Map<string, RuntimeEvent>()
      const lookup: AppendLookup = {
        prompt: (promptId) => {
          const requested = promptsInBatch.get(promptId)
          if (requested?.type === "user-input.requested") return requested.payload.prompt
          const json = loaded.prompts.get(promptId)
          return json === undefined ? undefined : decodePromptJson(json)
        }
      }
      const rows: Array<EventRowToInsert> = []
      /** Per event of the batch: already in the log, appended as row n, or a repeat of row n's id. */
      const slots: Array<AppendResult | { readonly row: number; readonly repeat: boolean }> = []
      const seen = new Map<string, number>()
      for (const [index, incoming] of batch.entries()) {
        const again = seen.get(incoming.eventId)
        if (again !== undefined) {
          slots.push({ row: again, repeat: true })
          continue
        }
        const known = loaded.known.get(incoming.eventId)
        if (known !== undefined) {
          slots.push({ seq: known.seq, threadSeq: known.threadSeq, duplicate: true })
          continue
        }
        const event = beforeAppend === undefined ? incoming : beforeAppend(incoming, lookup)
        if (event.type === "user-input.requested") {
          const promptId = event.payload.prompt.promptId
          if (!loaded.prompts.has(promptId) && !promptsInBatch.has(promptId)) promptsInBatch.set(promptId, event)
        }
        const threadSeq = (loaded.heads.get(event.threadId) ?? 0) + 1
        loaded.heads.set(event.threadId, threadSeq)
        projector.project(event, threadSeq)
        seen.set(incoming.eventId, rows.length)
        slots.push({ row: rows.length, repeat: false })
        const json = (event === incoming ? batchJson?.[index] : undefined) ?? eventJsonOf(event)
        rows.push({ event, threadSeq, json })
      }
      projector.finishBatch()
      const script = [
        ...insertEvents(rows),
        ...sink.scriptWrites(preparedOn(client)),
        ...announce(rows.length),
        "commit"
      ].join(";\n")
      const outcome = (await client.query(script)) as unknown as pg.QueryResult | Array<pg.QueryResult>
      const seqs =
        rows.length === 0 ? [] : (Array.isArray(outcome) ? outcome[0]! : outcome).rows.map((r) => Number(r.seq))
      if (seqs.length !== rows.length) throw new Error(`${rows.length} events sent, ${seqs.length} stored`)
      const results = slots.map((slot): AppendResult => {
        if (!("row" in slot)) return slot
        const { event, threadSeq, json } = rows[slot.row]!
        const seq = seqs[slot.row]!
        return slot.repeat
          ? { seq, threadSeq, duplicate: true }
          : { seq, threadSeq, duplicate: false, stored: { seq, threadSeq, event, json } }
      })
      return { results, earlier: loaded.earlier }
    } catch (error) {
      projector.reset()
      sink.clear()
      await client.query("rollback").catch(() => undefined)
      // Which statements the connection has prepared is no longer known: it is not reused.
      broken = error instanceof Error ? error : new Error(String(error))
      throw error
    } finally {
      client.release(broken)
    }
  }

  /** The batch's events in one INSERT; `seq` is drawn in the order of the rows (ordinality) and returned in it. */
  const insertEvents = (rows: ReadonlyArray<EventRowToInsert>): Array<string> =>
    rows.length === 0
      ? []
      : [
          `insert into events (event_id, thread_id, thread_seq, schema_version, event, raw)
           select e, t, s, ${CURRENT_EVENT_SCHEMA_VERSION}, j, r
           from unnest(${textArray(rows.map((r) => r.event.eventId))}, ${textArray(rows.map((r) => r.event.threadId))},
             ${intArray(rows.map((r) => r.threadSeq))}, ${textArray(rows.map((r) => r.json.event))},
             ${textArray(rows.map((r) => r.json.raw))})
             with ordinality as u(e, t, s, j, r, n)
           order by n
           returning seq`
        ]

  /** The transaction's one NOTIFY: its `seq` range (consecutive: drawn under the lock), for other writers. */
  const announce = (count: number): Array<string> => {
    if (count === 0) return []
    const last = "currval(pg_get_serial_sequence('events', 'seq'))"
    return [
      `select pg_notify(${literal(EVENTS_CHANNEL)}, json_build_object('o', ${literal(origin)}, 'f', ${last} - ${count - 1}, 'l', ${last})::text)`
    ]
  }

  const readThreadRows = async (threadId: ThreadId, afterThreadSeq: number, limit: number) =>
    (
      await pool.query<EventRow>(
        `select ${COLUMNS} from events where thread_id = $1 and thread_seq > $2 order by thread_seq limit $3`,
        [threadId, afterThreadSeq, limit]
      )
    ).rows

  const readThread = async (threadId: ThreadId, afterThreadSeq: number, limit: number): Promise<Array<StoredEvent>> =>
    (await readThreadRows(threadId, afterThreadSeq, limit)).map((row) => ({
      seq: row.seq,
      threadSeq: row.threadSeq,
      event: parsePersistedEvent(row)
    }))
  const readThreadJson = async (
    threadId: ThreadId,
    afterThreadSeq: number,
    limit: number
  ): Promise<Array<StoredEventJson>> =>
    (await readThreadRows(threadId, afterThreadSeq, limit)).map((row) => ({
      threadSeq: row.threadSeq,
      eventJson: persistedEventJson(row)
    }))
  const readAll = async (afterSeq: number, limit: number, on: pg.Pool | pg.PoolClient = pool) =>
    (
      await on.query<EventRow>(`select ${COLUMNS} from events where seq > $1 order by seq limit $2`, [afterSeq, limit])
    ).rows.map((row): StoredEvent => ({ seq: row.seq, threadSeq: row.threadSeq, event: decodePersistedEvent(row) }))
  /** Committed events with `afterSeq < seq <= upToSeq`, in order (what NOTIFYs announced). */
  const readAfter = async (
    on: pg.Pool | pg.PoolClient,
    afterSeq: number,
    upToSeq: number
  ): Promise<Array<StoredEvent>> =>
    (
      await on.query<EventRow>(`select ${COLUMNS} from events where seq > $1 and seq <= $2 order by seq`, [
        afterSeq,
        upToSeq
      ])
    ).rows.map((row) => ({ seq: row.seq, threadSeq: row.threadSeq, event: parsePersistedEvent(row) }))
  const readRange = (afterSeq: number, upToSeq: number) => readAfter(pool, afterSeq, upToSeq)
  /** The newest `seq` in the log (0 when empty). */
  const lastSeq = async (): Promise<number> =>
    (await pool.query<{ last: number | null }>("select max(seq) as last from events")).rows[0]?.last ?? 0
  const threadHead = async (threadId: ThreadId): Promise<number> =>
    (
      await pool.query<{ head: number | null }>(`select max(thread_seq) as head from events where thread_id = $1`, [
        threadId
      ])
    ).rows[0]?.head ?? 0

  return {
    origin,
    appendBatch,
    readThread,
    readThreadJson,
    readAll,
    readRange,
    lastSeq,
    threadHead,
    projector,
    sink
  }
}

/** The PostgreSQL event log of the store; internal to the PostgreSQL store services. */
export class PgEventLog extends Context.Service<PgEventLog, ReturnType<typeof makePgEventLog>>()(
  "planbridge/PgEventLog"
) {
  static readonly layer = (origin: string) =>
    Layer.effect(
      PgEventLog,
      Effect.gen(function* () {
        const database = yield* PgDatabase
        return yield* Effect.try({
          try: () => makePgEventLog(database, origin),
          catch: storeFailure("unavailable", "prepare the event log")
        })
      })
    )
}
