import { asc, eq, getTableColumns, sql, type Column, type SQL, type Table } from "drizzle-orm"
import type { StatementBuilder, StatementTables } from "./StatementBuilder.ts"

/** A column under its TypeScript name: rows of statements run natively carry the SQL names otherwise. */
export const named = (column: Column, key: string) => sql`${column}`.as(key)
/**
 * Every column of a table under its TypeScript name, but the row's snapshot JSON (`json`,
 * SnapshotRowJson.ts): it repeats the other columns, and the snapshot object is built from them.
 */
export const columnsOf = (table: Table) =>
  Object.fromEntries(
    Object.entries(getTableColumns(table))
      .filter(([key]) => key !== "json")
      .map(([key, column]) => [key, named(column, key)])
  )

/**
 * The snapshot's statements by thread (`threadId`) that both engines share, built over the tables
 * given (PostgreSQL's through postgres/PgStatementBuilder.ts); `itemText` is the engine's whole
 * item text (ItemText.ts, postgres/PgItemText.ts). The newest checklist revision (`latestPlan`)
 * is each engine's own query.
 */
export const snapshotQueries = (db: StatementBuilder, t: StatementTables, itemText: SQL<string>) => {
  const threadId = sql.placeholder("threadId")
  return {
    thread: db.select(columnsOf(t.threads)).from(t.threads).where(eq(t.threads.threadId, threadId)),
    revisions: db
      .select({
        turnId: named(t.planSnapshots.turnId, "turnId"),
        revision: sql<number | null>`max(${t.planSnapshots.revision})`.as("revision")
      })
      .from(t.planSnapshots)
      .where(eq(t.planSnapshots.threadId, threadId))
      .groupBy(t.planSnapshots.turnId)
      .orderBy(asc(t.planSnapshots.turnId)),
    turns: db
      .select(columnsOf(t.turns))
      .from(t.turns)
      .where(eq(t.turns.threadId, threadId))
      .orderBy(asc(t.turns.startedAt), asc(t.turns.turnId)),
    items: db
      .select({ ...columnsOf(t.items), text: sql<string>`${itemText}`.as("text") })
      .from(t.items)
      .where(eq(t.items.threadId, threadId))
      .orderBy(asc(t.items.startedAt), asc(t.items.itemId)),
    proposedPlans: db
      .select(columnsOf(t.proposedPlans))
      .from(t.proposedPlans)
      .where(eq(t.proposedPlans.threadId, threadId))
      .orderBy(asc(t.proposedPlans.createdAt), asc(t.proposedPlans.planId)),
    prompts: db
      .select(columnsOf(t.prompts))
      .from(t.prompts)
      .where(eq(t.prompts.threadId, threadId))
      .orderBy(asc(t.prompts.createdAt), asc(t.prompts.promptId)),
    requests: db
      .select(columnsOf(t.requests))
      .from(t.requests)
      .where(eq(t.requests.threadId, threadId))
      .orderBy(asc(t.requests.createdAt), asc(t.requests.requestId))
  }
}
