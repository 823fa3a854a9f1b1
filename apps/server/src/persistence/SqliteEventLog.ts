import type { RuntimeEvent, ThreadId, UserInputPrompt } from "@planbridge/contracts"
import { and, asc, eq, gt, sql } from "drizzle-orm"
import { Context, Effect, Layer } from "effect"
import { Database, type Db } from "./Database.ts"
import { eventJsonOf, type EventJson } from "./EventJson.ts"
import type { AppendLookup, AppendResult, BeforeAppend, StoredEvent, StoredEventJson } from "./EventStore.ts"
import { prepareNative } from "./NativeStatement.ts"
import { isRowAlreadyThere, prepareEventRowsInsert, type EventRow } from "./SqliteEventRows.ts"
import {
  CURRENT_EVENT_SCHEMA_VERSION,
  decodePersistedEvent,
  parsePersistedEvent,
  persistedEventJson
} from "./PersistedEvent.ts"
import { makeProjectionLag, type ProjectionLagOptions } from "./ProjectionLag.ts"
import { storeFailure } from "./StoreError.ts"
import { decodePromptJson } from "./StoredPrompt.ts"
import { events, prompts } from "./schema.ts"

const toStored = (row: typeof events.$inferSelect): StoredEvent => ({
  seq: row.seq,
  threadSeq: row.threadSeq,
  event: decodePersistedEvent(row)
})

/**
 * The event log and its projections on the one SQLite connection, written synchronously in one
 * transaction per batch: either every event of the batch is appended, or none is. The
 * projections lag the log by a bounded number of events (ProjectionLag.ts): they are written in
 * the transaction of the append that reaches the bound, within `PROJECTION_LAG_MS`, or before any
 * read of them, whichever comes first. Its functions throw what better-sqlite3 throws;
 * SqliteEventStore.ts turns that into `StoreError`s. One per database (a Layer): the per-thread
 * sequence cache and the projector's knowledge of existing threads exist once, shared by appends
 * and rebuilds. `committed` is told of each committed batch (the WAL checkpointer counts them).
 */
export const makeSqliteEventLog = (
  db: Db,
  committed: () => void = () => undefined,
  lagOptions?: ProjectionLagOptions
) => {
  const native = (query: Parameters<typeof prepareNative>[1]) => prepareNative(db.$client, query)
  const findByEventId = native(
    db
      .select({ seq: events.seq, threadSeq: sql<number>`${events.threadSeq}`.as("threadSeq") })
      .from(events)
      .where(eq(events.eventId, sql.placeholder("eventId")))
  )
  const lastThreadSeq = native(
    db
      .select({ last: sql<number>`max(${events.threadSeq})`.as("last") })
      .from(events)
      .where(eq(events.threadId, sql.placeholder("threadId")))
  )
  const insertEvent = native(
    db
      .insert(events)
      .values({
        eventId: sql.placeholder("eventId"),
        threadId: sql.placeholder("threadId"),
        threadSeq: sql.placeholder("threadSeq"),
        schemaVersion: CURRENT_EVENT_SCHEMA_VERSION,
        event: sql.placeholder("event"),
        raw: sql.placeholder("raw")
      })
      .onConflictDoNothing({ target: events.eventId })
  )
  const promptById = native(
    db
      .select({ prompt: prompts.prompt })
      .from(prompts)
      .where(eq(prompts.promptId, sql.placeholder("promptId")))
  )

  const lag = makeProjectionLag(db, lagOptions)
  /** Per-thread sequence high-water marks; only updated after a successful commit. */
  const lastSeqByThread = new Map<string, number>()
  /**
   * What `beforeAppend` sees of the prompts: the first request of a prompt wins (the `prompts`
   * row is never replaced), so the projected table first, then the lagging events, then the
   * batch's own events before the one looked up (`batchPrompts`).
   */
  const lookupWith = (batchPrompts: ReadonlyMap<string, UserInputPrompt>): AppendLookup => ({
    prompt: (promptId) => {
      const row = promptById.get<{ prompt: string }>({ promptId })
      if (row !== undefined) return decodePromptJson(row.prompt)
      return lag.unprojectedPrompt(promptId) ?? batchPrompts.get(promptId)
    }
  })
  const threadHead = (threadId: string): number => lastThreadSeq.get<{ last: number | null }>({ threadId })?.last ?? 0

  const lastSeq = native(db.select({ last: sql<number>`max(${events.seq})`.as("last") }).from(events))
  const insertRows = prepareEventRowsInsert(db.$client)
  /** The log's last `seq`, known after a batch appended together; undefined: ask the log. */
  let headSeq: number | undefined

  /**
   * One attempt's state: the threads' sequences it has taken (`pending`, kept once it commits),
   * the prompts its events requested, and `beforeAppend`'s lookup over them.
   */
  interface AttemptState {
    readonly pending: Map<string, number>
    readonly batchPrompts: Map<string, UserInputPrompt>
    readonly lookup: AppendLookup
  }

  /**
   * What an incoming event becomes in the log, whichever way the batch is appended: the event
   * `beforeAppend` made of it, its thread's next sequence (not taken yet: the caller takes it
   * once the row is in), and its JSON (the batch's own when the event is unchanged).
   */
  const rowOf = (
    incoming: RuntimeEvent,
    index: number,
    beforeAppend: BeforeAppend | undefined,
    batchJson: ReadonlyArray<EventJson> | undefined,
    { pending, batchPrompts, lookup }: AttemptState
  ) => {
    const event = beforeAppend === undefined ? incoming : beforeAppend(incoming, lookup)
    if (event.type === "user-input.requested" && !batchPrompts.has(event.payload.prompt.promptId))
      batchPrompts.set(event.payload.prompt.promptId, event.payload.prompt)
    const { threadId } = event
    const threadSeq = (pending.get(threadId) ?? lastSeqByThread.get(threadId) ?? threadHead(threadId)) + 1
    const json = (event === incoming ? batchJson?.[index] : undefined) ?? eventJsonOf(event)
    return { event, threadSeq, json }
  }

  /**
   * The batch with its rows in multi-row INSERTs (SqliteEventRows.ts): what `beforeAppend` looks
   * up sees the events before it. Assumes no id is in the log or twice in the batch; if one is,
   * the insert fails (the id is unique) and the caller rolls the whole transaction back.
   */
  const appendTogether = (
    batch: ReadonlyArray<RuntimeEvent>,
    beforeAppend: BeforeAppend | undefined,
    batchJson: ReadonlyArray<EventJson> | undefined,
    state: AttemptState
  ): ReadonlyArray<AppendResult> => {
    let seq = headSeq ?? lastSeq.get<{ last: number | null }>({})?.last ?? 0
    const rows: Array<EventRow> = []
    const results: Array<AppendResult> = []
    for (let index = 0; index < batch.length; index++) {
      const { event, threadSeq, json } = rowOf(batch[index]!, index, beforeAppend, batchJson, state)
      state.pending.set(event.threadId, threadSeq)
      seq += 1
      rows.push({ seq, eventId: event.eventId, threadId: event.threadId, threadSeq, json })
      results.push({ seq, threadSeq, duplicate: false, stored: { seq, threadSeq, event, json } })
    }
    insertRows(rows)
    return results
  }

  /** The batch one event at a time: an id already in the log is a duplicate, written nowhere. */
  const appendOneByOne = (
    batch: ReadonlyArray<RuntimeEvent>,
    beforeAppend: BeforeAppend | undefined,
    batchJson: ReadonlyArray<EventJson> | undefined,
    state: AttemptState
  ): ReadonlyArray<AppendResult> => {
    const seenInBatch = new Map<string, AppendResult>()
    const append = (incoming: RuntimeEvent, index: number): AppendResult => {
      const again = seenInBatch.get(incoming.eventId)
      if (again !== undefined) return { seq: again.seq, threadSeq: again.threadSeq, duplicate: true }
      const { event, threadSeq, json } = rowOf(incoming, index, beforeAppend, batchJson, state)
      // `run` reports the new rowid for free; RETURNING cost a third of the append.
      const inserted = insertEvent.run({
        eventId: event.eventId,
        threadId: event.threadId,
        threadSeq,
        event: json.event,
        raw: json.raw
      })
      if (inserted.changes === 0) {
        // The id is already in the log (the unique index said so): re-ingesting is a no-op.
        const known = findByEventId.get<{ seq: number; threadSeq: number }>({ eventId: event.eventId })
        if (known === undefined) throw new Error(`event ${event.eventId} was neither inserted nor found`)
        return { seq: known.seq, threadSeq: known.threadSeq, duplicate: true }
      }
      state.pending.set(event.threadId, threadSeq)
      const seq = Number(inserted.lastInsertRowid)
      const result = { seq, threadSeq, duplicate: false, stored: { seq, threadSeq, event, json } }
      seenInBatch.set(event.eventId, result)
      return result
    }
    return batch.map(append)
  }

  /**
   * Runs `work` in a transaction: better-sqlite3's own wrapper, made once. Drizzle's
   * `db.transaction` builds a transaction object and four wrapped functions on every call.
   */
  const inTransaction = db.$client.transaction(<T>(work: () => T): T => work()) as <T>(work: () => T) => T

  /**
   * One transaction per batch. Appended together first (re-ingesting is rare: after a restart,
   * a retry); when an id is already in the log or repeated in the batch, that transaction is
   * rolled back and the batch appended again one event at a time, which tells duplicates from
   * new events.
   */
  const appendBatch = (
    batch: ReadonlyArray<RuntimeEvent>,
    beforeAppend?: BeforeAppend,
    batchJson?: ReadonlyArray<EventJson>
  ): ReadonlyArray<AppendResult> => {
    const attempt = (way: typeof appendTogether) => {
      const pending = new Map<string, number>()
      const batchPrompts = new Map<string, UserInputPrompt>()
      // The lookup is made once per attempt, not once per event: it reads `batchPrompts` as they fill.
      const state: AttemptState = { pending, batchPrompts, lookup: lookupWith(batchPrompts) }
      try {
        return inTransaction(() => {
          const results = way(batch, beforeAppend, batchJson, state)
          const stored: Array<StoredEvent> = []
          for (const result of results) if (result.stored !== undefined) stored.push(result.stored)
          return { results, pending, stored, projected: lag.appended(stored) }
        })
      } catch (error) {
        lag.rolledBack()
        headSeq = undefined
        throw error
      }
    }
    let outcome
    try {
      outcome = attempt(appendTogether)
    } catch (error) {
      if (!isRowAlreadyThere(error)) throw error
      outcome = attempt(appendOneByOne)
    }
    const { results, pending, stored, projected } = outcome
    committed()
    lag.committed(stored, projected)
    for (const [threadId, seq] of pending) lastSeqByThread.set(threadId, seq)
    let last: number | undefined
    for (const result of results) if (!result.duplicate) last = result.seq
    if (last !== undefined) headSeq = last
    return results
  }

  // A client's backlog: prepared once on the connection (drizzle's per-call query building and
  // row mapping cost as much as SQLite), rows parsed rather than decoded (parsePersistedEvent).
  const threadPage = native(
    db
      .select({
        seq: events.seq,
        threadSeq: sql<number>`${events.threadSeq}`.as("threadSeq"),
        schemaVersion: sql<number>`${events.schemaVersion}`.as("schemaVersion"),
        event: events.event,
        raw: events.raw
      })
      .from(events)
      .where(and(eq(events.threadId, sql.placeholder("threadId")), gt(events.threadSeq, sql.placeholder("after"))))
      .orderBy(asc(events.threadSeq))
      .limit(sql.placeholder("limit"))
  )
  type PageRow = { seq: number; threadSeq: number; schemaVersion: number; event: string; raw: string | null }
  const readThread = (threadId: ThreadId, afterThreadSeq: number, limit: number): ReadonlyArray<StoredEvent> =>
    threadPage
      .all<PageRow>({ threadId, after: afterThreadSeq, limit })
      .map((row) => ({ seq: row.seq, threadSeq: row.threadSeq, event: parsePersistedEvent(row) }))
  const readThreadJson = (threadId: ThreadId, afterThreadSeq: number, limit: number): ReadonlyArray<StoredEventJson> =>
    threadPage
      .all<PageRow>({ threadId, after: afterThreadSeq, limit })
      .map((row) => ({ threadSeq: row.threadSeq, eventJson: persistedEventJson(row) }))

  const readAll = (afterSeq: number, limit: number): ReadonlyArray<StoredEvent> =>
    db.select().from(events).where(gt(events.seq, afterSeq)).orderBy(asc(events.seq)).limit(limit).all().map(toStored)

  /** Forget cached sequence numbers and known threads, and reload the lag (after a rebuild). */
  const resetCache = (): void => {
    lastSeqByThread.clear()
    headSeq = undefined
    lag.reload()
  }

  return { appendBatch, readThread, readThreadJson, readAll, threadHead, resetCache, projector: lag.projector, lag }
}

/** The SQLite event log of the store's database; internal to the SQLite store services. */
export class SqliteEventLog extends Context.Service<SqliteEventLog, ReturnType<typeof makeSqliteEventLog>>()(
  "planbridge/SqliteEventLog"
) {
  static readonly layer = Layer.effect(
    SqliteEventLog,
    Effect.gen(function* () {
      const { db, walCheckpointer } = yield* Database
      return yield* Effect.acquireRelease(
        Effect.try({
          try: () => {
            const log = makeSqliteEventLog(db, walCheckpointer.committed)
            log.lag.register()
            return log
          },
          catch: storeFailure("unavailable", "prepare the event log")
        }),
        // Before the connection closes: what lags is projected now rather than at the next open.
        (log) => Effect.sync(() => log.lag.close())
      )
    })
  )
}
