import type { RuntimeEvent, ThreadId } from "@planbridge/contracts"
import { Context, Effect, Layer } from "effect"
import type pg from "pg"
import { eventJsonOf, type EventJson } from "../EventJson.ts"
import type { AppendLookup, AppendResult, BeforeAppend, StoredEvent, StoredEventJson } from "../EventStore.ts"
import { decodePersistedEvent, parsePersistedEvent, persistedEventJson } from "../PersistedEvent.ts"
import { makeProjectorOn } from "../Projector.ts"
import type { LeaseFences } from "../SessionLeases.ts"
import { storeError, storeFailure } from "../StoreError.ts"
import { decodePromptJson } from "../StoredPrompt.ts"
import { PgDatabase } from "./PgDatabase.ts"
import { preparePgProjectionStatements } from "./PgProjectionStatements.ts"
import { beginAppendStatement, FENCED_SQLSTATE, loadForAppend, type AppendLoad } from "./PgAppendLoad.ts"
import { announce, EVENTS_CHANNEL, insertEvents, type EventRowToInsert } from "./PgAppendScript.ts"
import { makePgProjectionSink } from "./PgProjectionSink.ts"

/**
 * The key of the append lock. Appends take it SHARED (they never wait for each other on it); a
 * projection rebuild takes it exclusively, and so waits for every append in flight and holds off
 * the next ones. What orders appends is each thread's own lock (migration 0010's
 * `planbridge_begin_append`).
 */
export const APPEND_LOCK = 0x706c_676c // "plgl"
/** The channel of the append transactions' NOTIFYs (PgAppendScript.ts). */
export { EVENTS_CHANNEL }
/**
 * Threads whose head this process remembers from its own commits (the one-round-trip append). A
 * bound on memory, not on correctness: a thread past it takes the two-round-trip path once.
 */
export const HEAD_CACHE_BOUND = 10_000

/**
 * The most of one thread's events a catch-up after a lost LISTEN connection publishes (the rest
 * are in the log, where a client's feed reads them).
 */
export const CATCH_UP_TAIL = 10_000

/** A thread's events committed by one transaction: `[threadId, first thread_seq, last thread_seq]`. */
export type ThreadRange = readonly [threadId: string, first: number, last: number]

interface EventRow {
  seq: number
  threadSeq: number
  schemaVersion: number
  event: string
  raw: string | null
}
const COLUMNS = `seq, thread_seq as "threadSeq", schema_version as "schemaVersion", event, raw`
/** The unique indexes an append's INSERT meets when what it assumed (heads, new ids) was stale. */
const STALE_ASSUMPTION = new Set(["events_event_id", "events_thread_seq"])

const isPgError = (error: unknown): error is { code?: string; constraint?: string; message: string } =>
  typeof error === "object" && error !== null && "message" in error

/**
 * The event log and its projections on PostgreSQL, one transaction per batch. No lock is shared
 * between threads: each append takes its threads' own locks (and the append lock in shared mode),
 * so appends for different threads, from this process or any replica, never wait for each other.
 * A thread's `thread_seq` stays gap-free (its head is read or assumed under its lock, and a wrong
 * assumption breaks a unique index); `seq` is unique and grows within each thread, but across
 * threads it is no longer commit order (two appends draw `seq`s concurrently), so readers follow
 * threads, not `seq` (PgEventStore.ts, PgCommitListener.ts).
 *
 * One round trip when the batch allows it: when this process knows the head of every thread of
 * the batch from its own last commit (`heads`), and the batch reads nothing else the projector
 * needs from the database (no prompt resolution, no checklist revision), the batch is folded in
 * memory first and sent as one script: begin, locks and fence, the events' INSERT, every
 * projection write, the NOTIFY and the COMMIT. A stale head (another writer appended meanwhile, a
 * take-over) or an event id already in the log makes the INSERT fail on its unique index before
 * anything else ran: the transaction is rolled back and the batch takes the other path. That path
 * is two round trips: the locks, the fence and one select of all the batch needs (PgAppendLoad.ts),
 * then the script. Either way the batch is folded exactly as SQLite's (SqliteEventLog.ts, the same
 * projector), all of it or nothing. Its functions reject with what node-postgres throws.
 */
export const makePgEventLog = (database: PgDatabase["Service"], origin: string) => {
  const { pool } = database
  const sink = makePgProjectionSink(preparePgProjectionStatements(database.db))
  const projector = makeProjectorOn(sink.statements)
  /** The projection statements each pooled connection has prepared (PgProjectionSink.scriptWrites). */
  const prepared = new WeakMap<pg.PoolClient, Set<string>>()
  const preparedOn = (client: pg.PoolClient): Set<string> =>
    prepared.get(client) ?? prepared.set(client, new Set()).get(client)!
  /** Threads' heads as this process last committed them, least recently used first. */
  const heads = new Map<string, number>()
  const rememberHead = (threadId: string, head: number) => {
    heads.delete(threadId)
    heads.set(threadId, head)
    if (heads.size > HEAD_CACHE_BOUND) heads.delete(heads.keys().next().value!)
  }

  /** What the one-round-trip path assumes, or undefined when the batch must read the database. */
  const assumedLoad = (batch: ReadonlyArray<RuntimeEvent>): AppendLoad | undefined => {
    const assumed = new Map<string, number>()
    for (const event of batch) {
      if (event.type === "user-input.resolved" || event.type === "turn.plan.updated") return undefined
      const head = heads.get(event.threadId)
      if (head === undefined) return undefined
      assumed.set(event.threadId, head)
    }
    return {
      known: new Map(),
      heads: assumed,
      prompts: new Map(),
      // Every thread this process committed to has its row (the projector makes it on the first event).
      projection: { threads: new Set(assumed.keys()), revisions: new Map() }
    }
  }

  /** The batch folded over what was loaded or assumed: the rows to insert, each event's slot, and the projections queued. */
  const fold = (
    batch: ReadonlyArray<RuntimeEvent>,
    loaded: AppendLoad,
    beforeAppend: BeforeAppend | undefined,
    batchJson: ReadonlyArray<EventJson> | undefined
  ) => {
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
    const threadHeads = new Map(loaded.heads)
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
      const threadSeq = (threadHeads.get(event.threadId) ?? 0) + 1
      threadHeads.set(event.threadId, threadSeq)
      sink.forThread(event.threadId, () => projector.project(event, threadSeq))
      seen.set(incoming.eventId, rows.length)
      slots.push({ row: rows.length, repeat: false })
      const json = (event === incoming ? batchJson?.[index] : undefined) ?? eventJsonOf(event)
      rows.push({ event, threadSeq, json })
    }
    projector.finishBatch()
    return { rows, slots, threadHeads }
  }

  /** The script after the locks: the INSERT, the projections, the NOTIFY, the COMMIT. */
  const writes = (client: pg.PoolClient, rows: ReadonlyArray<EventRowToInsert>): Array<string> => [
    ...insertEvents(rows),
    ...sink.scriptWrites(preparedOn(client)),
    ...announce(origin, rows),
    "commit"
  ]

  /** The results of a committed script: the `seq`s the INSERT returned, in the rows' order. */
  const resultsOf = (
    outcome: pg.QueryResult | Array<pg.QueryResult>,
    insertAt: number,
    folded: ReturnType<typeof fold>
  ): ReadonlyArray<AppendResult> => {
    const { rows, slots } = folded
    const seqs =
      rows.length === 0
        ? []
        : (Array.isArray(outcome) ? outcome[insertAt]! : outcome).rows.map((r: { seq: unknown }) => Number(r.seq))
    if (seqs.length !== rows.length) throw new Error(`${rows.length} events sent, ${seqs.length} stored`)
    return slots.map((slot): AppendResult => {
      if (!("row" in slot)) return slot
      const { event, threadSeq, json } = rows[slot.row]!
      const seq = seqs[slot.row]!
      return slot.repeat
        ? { seq, threadSeq, duplicate: true }
        : { seq, threadSeq, duplicate: false, stored: { seq, threadSeq, event, json } }
    })
  }

  /**
   * Appends a batch (see `makePgEventLog`): in one round trip when the batch allows it, else two.
   * `fences`: the leases the batch's writer holds, proved by `planbridge_begin_append` under the
   * threads' locks, so that the check holds at the commit (PROTOCOL.md, "The fence"). Appends of
   * different threads may be in flight at once (PgEventStore.ts): the one projector stays safe
   * because each fold runs synchronously, from `sink.load` to the script handed to the connection,
   * and a failed append's reset only drops what the projector knows (it is read again).
   */
  const appendBatch = async (
    batch: ReadonlyArray<RuntimeEvent>,
    beforeAppend: BeforeAppend | undefined,
    batchJson?: ReadonlyArray<EventJson>,
    fences?: LeaseFences
  ): Promise<ReadonlyArray<AppendResult>> => {
    const threadIds = [...new Set(batch.map((event) => event.threadId))]
    const client = await pool.connect()
    let broken: Error | undefined
    try {
      const assumed = assumedLoad(batch)
      if (assumed !== undefined) {
        const folded = fold(batch, assumed, beforeAppend, batchJson)
        const preparedBefore = new Set(preparedOn(client))
        const script = ["begin", beginAppendStatement(origin, threadIds, fences), ...writes(client, folded.rows)]
        try {
          const outcome = (await client.query(script.join(";\n"))) as unknown as Array<pg.QueryResult>
          const results = resultsOf(outcome, 2, folded)
          for (const [threadId, head] of folded.threadHeads) rememberHead(threadId, head)
          return results
        } catch (error) {
          if (!(isPgError(error) && error.code === "23505" && STALE_ASSUMPTION.has(error.constraint ?? ""))) throw error
          // The INSERT failed before any later statement ran: the connection prepared nothing new.
          await client.query("rollback")
          prepared.set(client, preparedBefore)
          projector.reset()
          sink.clear()
          for (const threadId of threadIds) heads.delete(threadId)
        }
      }
      const loaded = await loadForAppend(client, origin, batch, fences)
      const folded = fold(batch, loaded, beforeAppend, batchJson)
      const outcome = (await client.query(writes(client, folded.rows).join(";\n"))) as unknown as
        pg.QueryResult | Array<pg.QueryResult>
      const results = resultsOf(outcome, 0, folded)
      for (const [threadId, head] of folded.threadHeads) rememberHead(threadId, head)
      return results
    } catch (error) {
      projector.reset()
      sink.clear()
      for (const threadId of threadIds) heads.delete(threadId)
      await client.query("rollback").catch(() => undefined)
      // Which statements the connection has prepared is no longer known: it is not reused.
      broken = error instanceof Error ? error : new Error(String(error))
      // Refused by the lease check: final, whatever the connection's state.
      if (isPgError(error) && error.code === FENCED_SQLSTATE)
        throw storeError("fenced", { operation: "append events", cause: error })
      throw error
    } finally {
      client.release(broken)
    }
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
  /**
   * Committed events of each `[threadId, after, upTo]`: `after < thread_seq <= upTo` (what NOTIFYs
   * announced, and gaps to fill), in one query, by `seq`: each thread's in its order (its `seq`s are
   * drawn under its lock), and one transaction's in its batch's order.
   */
  const readRanges = async (ranges: ReadonlyArray<ThreadRange>): Promise<Array<StoredEvent>> =>
    ranges.length === 0
      ? []
      : (
          await pool.query<EventRow>(
            `select ${COLUMNS} from unnest($1::text[], $2::int[], $3::int[]) as u(t, a, b)
               join events on thread_id = u.t and thread_seq > u.a and thread_seq <= u.b
             order by seq`,
            [ranges.map((r) => r[0]), ranges.map((r) => r[1]), ranges.map((r) => r[2])]
          )
        ).rows.map((row) => ({ seq: row.seq, threadSeq: row.threadSeq, event: parsePersistedEvent(row) }))
  /**
   * The threads committed to since `snapshot` (a `pg_snapshot` as text): each with the range of
   * its events not visible in it, `[threadId, after, head]`. A thread's commits are ordered, so
   * those events are a tail of it; at most `CATCH_UP_TAIL` of it is looked at. Their thread row
   * is rewritten by every append, so its `xmin` is the thread's last writer.
   */
  const changedSince = async (snapshot: string): Promise<Array<ThreadRange>> =>
    (
      await pool.query<{ t: string; after: number; head: number }>(
        `select thread_id as t, last_seq as head,
           (select coalesce(min(thread_seq), threads.last_seq + 1) - 1 from events
             where thread_id = threads.thread_id and thread_seq > threads.last_seq - $2
               and not pg_visible_in_snapshot(planbridge_xid8(events.xmin), $1::pg_snapshot)) as after
         from threads where not pg_visible_in_snapshot(planbridge_xid8(threads.xmin), $1::pg_snapshot)`,
        [snapshot, CATCH_UP_TAIL]
      )
    ).rows.map((row): ThreadRange => [row.t, Number(row.after), Number(row.head)])
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
    readRanges,
    changedSince,
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
