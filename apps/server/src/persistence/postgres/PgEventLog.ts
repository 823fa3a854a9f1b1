import type { RuntimeEvent, ThreadId } from "@planbridge/contracts"
import { Context, Effect, Layer } from "effect"
import type pg from "pg"
import type { AppendLookup, AppendResult, BeforeAppend, StoredEvent, StoredEventJson } from "../EventStore.ts"
import {
  CURRENT_EVENT_SCHEMA_VERSION,
  decodePersistedEvent,
  parsePersistedEvent,
  persistedEventJson
} from "../PersistedEvent.ts"
import { makeProjectorOn } from "../Projector.ts"
import { storeFailure } from "../StoreError.ts"
import { decodePromptJson } from "../StoredPrompt.ts"
import { PgDatabase } from "./PgDatabase.ts"
import { preparePgProjectionStatements } from "./PgProjectionStatements.ts"
import { loadProjectionReads, makePgProjectionSink } from "./PgProjectionSink.ts"
import { inTransaction } from "./PgTransaction.ts"

/**
 * The key of the transaction-level advisory lock every append takes first: appends from all
 * replicas run one at a time, so `seq` (a bigserial, drawn inside the lock) is in commit order and
 * a reader after a cursor never skips an event that commits later with a smaller one, and each
 * thread's head read under it is the one the next `thread_seq` follows.
 */
export const APPEND_LOCK = 0x706c_6267_6c6f_67 // "plbglog"
/** The channel of the one NOTIFY each append transaction sends: `{"o": origin, "f": first seq, "l": last seq}`. */
export const EVENTS_CHANNEL = "planbridge_events"

/** The event without `raw` (stored in its own column), as JSON. */
const canonicalJson = (event: RuntimeEvent): string => {
  if (event.raw === undefined) return JSON.stringify(event)
  const { raw: _raw, ...canonical } = event
  return JSON.stringify(canonical)
}

interface EventRow {
  seq: number
  threadSeq: number
  schemaVersion: number
  event: string
  raw: string | null
}
const COLUMNS = `seq, thread_seq as "threadSeq", schema_version as "schemaVersion", event, raw`

/**
 * The event log and its projections on PostgreSQL, one transaction per batch under the append
 * lock: the duplicates, thread heads and what the projector and `beforeAppend` read are loaded
 * in a few queries, the batch is folded in memory exactly as SQLite's (SqliteEventLog.ts, the
 * same projector), the events go in with one INSERT, then the projections, then one NOTIFY;
 * all of it or nothing. Its functions reject with what node-postgres throws.
 */
export const makePgEventLog = (database: PgDatabase["Service"], origin: string) => {
  const { pool } = database
  const sink = makePgProjectionSink(preparePgProjectionStatements(database.db))
  const projector = makeProjectorOn(sink.statements)

  const load = async (client: pg.PoolClient, batch: ReadonlyArray<RuntimeEvent>) => {
    const threadIds = [...new Set(batch.map((e) => e.threadId))]
    const promptIds = batch.flatMap((e) => (e.type === "user-input.resolved" ? [e.payload.promptId] : []))
    const known = await client.query<{ eventId: string; seq: number; threadSeq: number }>(
      `select event_id as "eventId", seq, thread_seq as "threadSeq" from events where event_id = any($1::text[])`,
      [batch.map((e) => e.eventId)]
    )
    const heads = await client.query<{ threadId: string; head: number }>(
      `select thread_id as "threadId", max(thread_seq) as head from events where thread_id = any($1::text[]) group by thread_id`,
      [threadIds]
    )
    const prompts =
      promptIds.length === 0
        ? []
        : (
            await client.query<{ promptId: string; prompt: string }>(
              `select prompt_id as "promptId", prompt from prompts where prompt_id = any($1::text[])`,
              [promptIds]
            )
          ).rows
    sink.load(await loadProjectionReads(client, batch))
    return {
      known: new Map(known.rows.map((row) => [row.eventId, row])),
      heads: new Map(heads.rows.map((row) => [row.threadId, row.head])),
      prompts: new Map(prompts.map((row) => [row.promptId, row.prompt]))
    }
  }

  /**
   * Appends a batch. `publishedSeq` is the last `seq` this process has published: the events
   * other writers committed after it are read under the lock (all of them are final there, since
   * appends run one at a time) and returned as `earlier`, to be published before the batch's own.
   */
  const appendBatch = (
    batch: ReadonlyArray<RuntimeEvent>,
    beforeAppend: BeforeAppend | undefined,
    publishedSeq: number
  ): Promise<{ readonly results: ReadonlyArray<AppendResult>; readonly earlier: ReadonlyArray<StoredEvent> }> =>
    inTransaction(pool, async (client) => {
      await client.query("select pg_advisory_xact_lock($1)", [APPEND_LOCK])
      const earlier = await readAfter(client, publishedSeq, Number.MAX_SAFE_INTEGER)
      const loaded = await load(client, batch)
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
      const rows: Array<{ event: RuntimeEvent; threadSeq: number }> = []
      /** Per event of the batch: already in the log, appended as row n, or a repeat of row n's id. */
      const slots: Array<AppendResult | { readonly row: number; readonly repeat: boolean }> = []
      const seen = new Map<string, number>()
      for (const incoming of batch) {
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
        rows.push({ event, threadSeq })
      }
      projector.finishBatch()
      const seqs = await insertEvents(client, rows)
      await sink.drain(client)
      if (rows.length > 0) {
        const payload = JSON.stringify({ o: origin, f: seqs[0], l: seqs[seqs.length - 1] })
        await client.query("select pg_notify($1, $2)", [EVENTS_CHANNEL, payload])
      }
      const results = slots.map((slot): AppendResult => {
        if (!("row" in slot)) return slot
        const { event, threadSeq } = rows[slot.row]!
        const seq = seqs[slot.row]!
        return slot.repeat
          ? { seq, threadSeq, duplicate: true }
          : { seq, threadSeq, duplicate: false, stored: { seq, threadSeq, event } }
      })
      return { results, earlier }
    }).catch((error: unknown) => {
      projector.reset()
      sink.clear()
      throw error
    })

  const insertEvents = async (
    client: pg.PoolClient,
    rows: ReadonlyArray<{ event: RuntimeEvent; threadSeq: number }>
  ): Promise<Array<number>> => {
    if (rows.length === 0) return []
    // One statement for the batch; `seq` is drawn in the order of the rows (ordinality).
    const inserted = await client.query<{ seq: number }>(
      `insert into events (event_id, thread_id, thread_seq, schema_version, event, raw)
       select e, t, s, $4::int, j, r
       from unnest($1::text[], $2::text[], $3::int[], $5::text[], $6::text[]) with ordinality as u(e, t, s, j, r, n)
       order by n
       returning seq`,
      [
        rows.map((r) => r.event.eventId),
        rows.map((r) => r.event.threadId),
        rows.map((r) => r.threadSeq),
        CURRENT_EVENT_SCHEMA_VERSION,
        rows.map((r) => canonicalJson(r.event)),
        rows.map((r) => (r.event.raw === undefined ? null : JSON.stringify(r.event.raw)))
      ]
    )
    if (inserted.rows.length !== rows.length)
      throw new Error(`${rows.length} events sent, ${inserted.rows.length} stored`)
    // RETURNING follows the rows as inserted, which `order by n` made the batch's order.
    return inserted.rows.map((row) => row.seq)
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
