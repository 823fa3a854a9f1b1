import { OperatingMode, THREAD_TITLE_CHARS, type ThreadId, type ThreadSummary } from "@planbridge/contracts"
import { asc, desc, eq, getTableColumns, sql, type SQL } from "drizzle-orm"
import { Effect, Schema } from "effect"
import type { threads } from "./schema.ts"
import { attempt, firstRow, type StatementFailure, type StatementPortShape } from "./StatementPort.ts"

const decodeMode = Schema.decodeUnknownSync(Schema.NullOr(OperatingMode))

/** A thread's row with what its summary adds from elsewhere: its first message and its archive time. */
export type SummaryRow = typeof threads.$inferSelect & {
  readonly title: string | null
  readonly archivedAt: string | null
}

/**
 * The thread's first message, at most THREAD_TITLE_CHARS characters of it (SQLite's and
 * PostgreSQL's `substr` count characters): a correlated subquery on the (thread, start, id)
 * index, which stops at the first user message, normally the thread's first item. `text` is the
 * engine's whole-item-text expression (the port's `dialect.itemText`).
 */
export const titleOf = (text: SQL<string>): SQL<string | null> =>
  sql<string | null>`(select substr(${text}, 1, ${sql.raw(String(THREAD_TITLE_CHARS))}) from "items"
    where "items"."thread_id" = "threads"."thread_id" and "items"."item_type" = 'user_message'
    order by "items"."started_at", "items"."item_id" limit 1)`

/** A thread's row as a list entry. `live` is the caller's (the session manager knows). */
export const threadSummary = (t: SummaryRow, isLive: (threadId: string) => boolean): ThreadSummary => ({
  threadId: t.threadId as ThreadId,
  provider: t.provider,
  state: t.state,
  mode: decodeMode(t.mode),
  seq: t.lastSeq,
  live: isLive(t.threadId),
  updatedAt: t.updatedAt,
  createdAt: t.createdAt,
  ...(t.cwd === null ? {} : { cwd: t.cwd }),
  ...(t.title === null || t.title.trim() === "" ? {} : { title: t.title }),
  ...(t.archivedAt === null ? {} : { archivedAt: t.archivedAt })
})

const summaries = ({ db, tables, dialect }: StatementPortShape) => {
  const { threads, archivedThreads } = tables
  return db
    .select({ ...getTableColumns(threads), title: titleOf(dialect.itemText), archivedAt: archivedThreads.archivedAt })
    .from(threads)
    .leftJoin(archivedThreads, eq(archivedThreads.threadId, threads.threadId))
}

/** Every thread, newest activity first. */
export const listThreads = (
  port: StatementPortShape,
  isLive: (threadId: string) => boolean
): Effect.Effect<ReadonlyArray<ThreadSummary>, StatementFailure> => {
  const { threads } = port.tables
  return port
    .rows(summaries(port).orderBy(desc(threads.updatedAt), asc(threads.threadId)))
    .pipe(Effect.flatMap((rows) => attempt(() => rows.map((t) => threadSummary(t, isLive)))))
}

/** One thread's summary; undefined when there is no such thread. */
export const readThreadSummary = (
  port: StatementPortShape,
  threadId: string,
  isLive: (threadId: string) => boolean
): Effect.Effect<ThreadSummary | undefined, StatementFailure> =>
  firstRow(port, summaries(port).where(eq(port.tables.threads.threadId, threadId))).pipe(
    Effect.flatMap((row) => attempt(() => (row === undefined ? undefined : threadSummary(row, isLive))))
  )

/**
 * Archives (`at`) or unarchives (`undefined`) a thread, in one transaction; archiving an archived
 * thread keeps its first time. Returns the archive time now in force (null: not archived),
 * undefined when there is no such thread.
 */
export const setThreadArchived = (
  port: StatementPortShape,
  threadId: string,
  at: string | undefined
): Effect.Effect<{ readonly archivedAt: string | null } | undefined, StatementFailure> =>
  port.transaction((tx) =>
    Effect.gen(function* () {
      const { db, tables } = tx
      const { threads, archivedThreads } = tables
      const thread = yield* firstRow(
        tx,
        db.select({ threadId: threads.threadId }).from(threads).where(eq(threads.threadId, threadId))
      )
      if (thread === undefined) return undefined
      if (at === undefined) {
        yield* tx.run(db.delete(archivedThreads).where(eq(archivedThreads.threadId, threadId)))
        return { archivedAt: null }
      }
      yield* tx.run(db.insert(archivedThreads).values({ threadId, archivedAt: at }).onConflictDoNothing())
      const row = yield* firstRow(tx, db.select().from(archivedThreads).where(eq(archivedThreads.threadId, threadId)))
      return { archivedAt: row?.archivedAt ?? null }
    })
  )
