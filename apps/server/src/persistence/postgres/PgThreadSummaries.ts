import type { ThreadSummary } from "@planbridge/contracts"
import { asc, desc, eq, getTableColumns } from "drizzle-orm"
import { threadSummary, titleOf } from "../ThreadSummaries.ts"
import type { PgDb } from "./PgDatabase.ts"
import { pgItemText } from "./PgItemText.ts"
import { archivedThreads, threads } from "./schema.ts"

/** ../ThreadSummaries.ts on PostgreSQL: the same rows, read and written through its own tables. */
const summaries = (db: PgDb) =>
  db
    .select({ ...getTableColumns(threads), title: titleOf(pgItemText), archivedAt: archivedThreads.archivedAt })
    .from(threads)
    .leftJoin(archivedThreads, eq(archivedThreads.threadId, threads.threadId))

export const listPgThreads = async (
  db: PgDb,
  isLive: (threadId: string) => boolean
): Promise<ReadonlyArray<ThreadSummary>> =>
  (await summaries(db).orderBy(desc(threads.updatedAt), asc(threads.threadId))).map((t) => threadSummary(t, isLive))

export const readPgThreadSummary = async (
  db: PgDb,
  threadId: string,
  isLive: (threadId: string) => boolean
): Promise<ThreadSummary | undefined> => {
  const [row] = await summaries(db).where(eq(threads.threadId, threadId))
  return row === undefined ? undefined : threadSummary(row, isLive)
}

/** ../ThreadSummaries.ts `setThreadArchived`, in one transaction. */
export const setPgThreadArchived = (
  db: PgDb,
  threadId: string,
  at: string | undefined
): Promise<{ readonly archivedAt: string | null } | undefined> =>
  db.transaction(async (tx) => {
    const [thread] = await tx.select({ threadId: threads.threadId }).from(threads).where(eq(threads.threadId, threadId))
    if (thread === undefined) return undefined
    if (at === undefined) {
      await tx.delete(archivedThreads).where(eq(archivedThreads.threadId, threadId))
      return { archivedAt: null }
    }
    await tx.insert(archivedThreads).values({ threadId, archivedAt: at }).onConflictDoNothing()
    const [row] = await tx.select().from(archivedThreads).where(eq(archivedThreads.threadId, threadId))
    return { archivedAt: row?.archivedAt ?? null }
  })
