import { OperatingMode, THREAD_TITLE_CHARS, type ThreadId, type ThreadSummary } from "@planbridge/contracts"
import { asc, desc, eq, getTableColumns, sql, type SQL } from "drizzle-orm"
import { Schema } from "effect"
import type { Db } from "./Database.ts"
import { itemText } from "./ItemText.ts"
import { archivedThreads, threads } from "./schema.ts"

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
 * engine's whole-item-text expression (ItemText.ts, PgItemText.ts).
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

const summaries = (db: Db) =>
  db
    .select({ ...getTableColumns(threads), title: titleOf(itemText), archivedAt: archivedThreads.archivedAt })
    .from(threads)
    .leftJoin(archivedThreads, eq(archivedThreads.threadId, threads.threadId))

/** Every thread, newest activity first. */
export const listThreads = (db: Db, isLive: (threadId: string) => boolean): ReadonlyArray<ThreadSummary> =>
  summaries(db)
    .orderBy(desc(threads.updatedAt), asc(threads.threadId))
    .all()
    .map((t) => threadSummary(t, isLive))

/** One thread's summary; undefined when there is no such thread. */
export const readThreadSummary = (
  db: Db,
  threadId: string,
  isLive: (threadId: string) => boolean
): ThreadSummary | undefined => {
  const row = summaries(db).where(eq(threads.threadId, threadId)).get()
  return row === undefined ? undefined : threadSummary(row, isLive)
}

/**
 * Archives (`at`) or unarchives (`undefined`) a thread; archiving an archived thread keeps its
 * first time. Returns the archive time now in force (null: not archived), undefined when there is
 * no such thread.
 */
export const setThreadArchived = (
  db: Db,
  threadId: string,
  at: string | undefined
): { readonly archivedAt: string | null } | undefined =>
  db.transaction(() => {
    if (
      db.select({ threadId: threads.threadId }).from(threads).where(eq(threads.threadId, threadId)).get() === undefined
    )
      return undefined
    if (at === undefined) {
      db.delete(archivedThreads).where(eq(archivedThreads.threadId, threadId)).run()
      return { archivedAt: null }
    }
    db.insert(archivedThreads).values({ threadId, archivedAt: at }).onConflictDoNothing().run()
    const row = db.select().from(archivedThreads).where(eq(archivedThreads.threadId, threadId)).get()
    return { archivedAt: row?.archivedAt ?? null }
  })
