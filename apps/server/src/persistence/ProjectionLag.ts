import type { UserInputPrompt } from "@planbridge/contracts"
import type BetterSqlite3 from "better-sqlite3"
import { asc, eq, gt, sql } from "drizzle-orm"
import type { Db } from "./Database.ts"
import { eventJsonLength } from "./EventJson.ts"
import type { StoredEvent } from "./EventStore.ts"
import { prepareNative } from "./NativeStatement.ts"
import { decodePersistedEvent } from "./PersistedEvent.ts"
import { makeProjector } from "./Projector.ts"
import { events, projectionWatermark } from "./schema.ts"

/**
 * How far the projections may lag the SQLite log (issue 32): at most this many committed events,
 * of at most `PROJECTION_LAG_CHARS` of stored JSON together (what the lag holds in memory), are
 * left unprojected, and none for longer than `PROJECTION_LAG_MS` after its commit. An append
 * that brings the lag to a bound projects the whole lag in its own transaction. Projecting many
 * batches at once is what saves the work: each thread-keyed b-tree's tail page is written once per
 * projection instead of once per batch, and an item's deltas fold into one row write (measured in
 * bench/PROFILE.md, "Sixth round"). The bound also bounds what a reader may have to project first:
 * 1,024 events of the bench's mix took 3–18 ms (median under load) against 24–96 ms for 4,096,
 * for nearly the same saving.
 */
export const PROJECTION_LAG_EVENTS = 1024
export const PROJECTION_LAG_CHARS = 1024 * 1024
export const PROJECTION_LAG_MS = 50

/** Events read per page when the tail past the watermark is loaded from the log. */
const TAIL_PAGE = 5_000

/** Each open connection's catch-up (the event log's), for the readers that hold only the `Db`. */
const catchUps = new WeakMap<BetterSqlite3.Database, () => void>()

/**
 * Brings the projections up to the log before a read of them: every reader of a projection table
 * calls this first (snapshots, history, the statement port's queries, rebuild dumps). A no-op when
 * nothing lags or no event log is open on the connection. Throws what SQLite throws.
 */
export const catchUpProjections = (db: Db): void => catchUps.get(db.$client)?.()

export interface ProjectionLagOptions {
  readonly lagEvents: number
  readonly lagChars: number
  readonly lagMs: number
}

export const DEFAULT_PROJECTION_LAG: ProjectionLagOptions = {
  lagEvents: PROJECTION_LAG_EVENTS,
  lagChars: PROJECTION_LAG_CHARS,
  lagMs: PROJECTION_LAG_MS
}

/** The stored JSON's length of an event (the lag's memory), read back from the log when not at hand. */
const charsOf = (stored: StoredEvent): number =>
  stored.json === undefined ? JSON.stringify(stored.event).length : eventJsonLength(stored.json)

/**
 * The projections of the log on one connection, lagging it by a bounded number of events. The
 * projection tables and the watermark row (the last `seq` they have applied) are written in the
 * same transaction, so after a crash the events past the watermark are exactly what is missing:
 * `makeProjectionLag` loads them, and `catchUp` (run by `Database.make` on every open) projects
 * them. Every apply reads the watermark row first and skips what it covers, so another
 * connection that caught up meanwhile (the CLI beside a running server) is never applied twice.
 */
export const makeProjectionLag = (db: Db, options: ProjectionLagOptions = DEFAULT_PROJECTION_LAG) => {
  const native = (query: Parameters<typeof prepareNative>[1]) => prepareNative(db.$client, query)
  const projector = makeProjector(db)
  const readWatermark = native(
    db.select({ seq: projectionWatermark.seq }).from(projectionWatermark).where(eq(projectionWatermark.id, 1))
  )
  const writeWatermark = native(
    db
      .insert(projectionWatermark)
      .values({ id: 1, seq: sql.placeholder("seq") })
      .onConflictDoUpdate({ target: projectionWatermark.id, set: { seq: sql`excluded.seq` } })
  )
  const watermark = (): number => readWatermark.get<{ seq: number }>({})?.seq ?? 0

  /** Committed events past the watermark, in log order. */
  let unprojected: Array<StoredEvent> = []
  /** Their stored JSON's length in all. */
  let unprojectedChars = 0
  /** The first prompt of each `user-input.requested` among them (what the `prompts` row will be). */
  const unprojectedPrompts = new Map<string, UserInputPrompt>()
  let timer: ReturnType<typeof setTimeout> | undefined

  const remember = (stored: StoredEvent): void => {
    unprojected.push(stored)
    unprojectedChars += charsOf(stored)
    const event = stored.event
    if (event.type === "user-input.requested" && !unprojectedPrompts.has(event.payload.prompt.promptId))
      unprojectedPrompts.set(event.payload.prompt.promptId, event.payload.prompt)
  }

  const forgetAll = (): void => {
    unprojected = []
    unprojectedChars = 0
    unprojectedPrompts.clear()
  }

  /** Projects the events (in log order) in the caller's transaction and moves the watermark past them. */
  const apply = (lagging: ReadonlyArray<StoredEvent>): void => {
    const through = watermark()
    let last = through
    for (const stored of lagging) {
      if (stored.seq <= through) continue
      projector.project(stored.event, stored.threadSeq)
      last = stored.seq
    }
    projector.finishBatch()
    if (last > through) writeWatermark.run({ seq: last })
  }

  /** Projects everything that lags, in a transaction of its own. Throws what SQLite throws. */
  const catchUp = (): void => {
    if (timer !== undefined) {
      clearTimeout(timer)
      timer = undefined
    }
    if (unprojected.length === 0) return
    try {
      db.$client.transaction(() => apply(unprojected))()
    } catch (error) {
      projector.reset()
      throw error
    }
    forgetAll()
  }

  /** The lag's time bound: a failure here is left to the next reader, whose catch-up reports it. */
  const catchUpLater = (): void => {
    timer = undefined
    try {
      catchUp()
    } catch {
      // Nothing is lost: the events stay in the log and in `unprojected`.
    }
  }

  /**
   * Inside an append's transaction, after its rows are in: when the batch brings the lag to its
   * bound, projects the lag and the batch there. Answers whether it did (for `committed`).
   */
  const appended = (batch: ReadonlyArray<StoredEvent>): boolean => {
    if (unprojected.length + batch.length < options.lagEvents) {
      let chars = unprojectedChars
      for (const stored of batch) chars += charsOf(stored)
      if (chars < options.lagChars) return false
    }
    apply(unprojected.length === 0 ? batch : [...unprojected, ...batch])
    return true
  }

  /** After the append's commit: what it left unprojected now lags, for at most `lagMs`. */
  const committed = (batch: ReadonlyArray<StoredEvent>, projected: boolean): void => {
    if (projected) {
      forgetAll()
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      return
    }
    for (const stored of batch) remember(stored)
    if (timer === undefined && unprojected.length > 0) {
      timer = setTimeout(catchUpLater, options.lagMs)
      // Never what keeps the process alive: the next open catches up from the watermark.
      timer.unref()
    }
  }

  /** After a rollback: the projector's batch state is stale (the lag itself is unchanged). */
  const rolledBack = (): void => projector.reset()

  /** Forgets what it knew and loads the events past the watermark from the log (start, rebuild). */
  const reload = (): void => {
    projector.reset()
    forgetAll()
    let after = watermark()
    for (;;) {
      const page = db.select().from(events).where(gt(events.seq, after)).orderBy(asc(events.seq)).limit(TAIL_PAGE).all()
      for (const row of page)
        remember({
          seq: row.seq,
          threadSeq: row.threadSeq,
          event: decodePersistedEvent(row),
          json: { event: row.event, raw: row.raw }
        })
      if (page.length < TAIL_PAGE) break
      after = page[page.length - 1]!.seq
    }
  }

  /** Registers `catchUp` as the connection's (`catchUpProjections`); undone by `close`. */
  const register = (): void => void catchUps.set(db.$client, catchUp)

  /** Projects what lags (best effort: a later open would) and unregisters; before the connection closes. */
  const close = (): void => {
    if (catchUps.get(db.$client) === catchUp) catchUps.delete(db.$client)
    try {
      catchUp()
    } catch {
      // The next open projects from the watermark.
    }
  }

  reload()

  return {
    projector,
    /** The first prompt requested by a lagging event, if any (`AppendLookup.prompt` after the table). */
    unprojectedPrompt: (promptId: string): UserInputPrompt | undefined => unprojectedPrompts.get(promptId),
    /** Events committed and not yet projected (tests, the bench). */
    lag: (): number => unprojected.length,
    /** Moves the watermark to `seq` in the caller's transaction (a rebuild that replayed the whole log). */
    projectedThrough: (seq: number): void => void writeWatermark.run({ seq }),
    appended,
    committed,
    rolledBack,
    catchUp,
    reload,
    register,
    close
  }
}

export type ProjectionLag = ReturnType<typeof makeProjectionLag>
