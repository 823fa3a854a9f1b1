import type { ProjectionStatementName } from "../ProjectionStatements.ts"
import { projectionQueries, type ProjectionQueryBuilder, type ProjectionTables } from "../ProjectionQueries.ts"
import type { PgDb } from "./PgDatabase.ts"
import { preparePg, type PgStatement } from "./PgStatement.ts"
import * as schema from "./schema.ts"

/** Whether two types are the same (each assignable to the other). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type Rows = { $inferInsert: unknown; $inferSelect: unknown }
type SameRows<A extends Rows, B extends Rows> =
  Same<A["$inferInsert"], B["$inferInsert"]> extends true ? Same<A["$inferSelect"], B["$inferSelect"]> : false

/**
 * Checked by the compiler: each PostgreSQL table the statements write has the same rows (same
 * columns, same value types) as its SQLite twin, which `asProjectionBuilder` relies on.
 */
const sameRows: { [K in keyof ProjectionTables]: SameRows<ProjectionTables[K], (typeof schema)[K]> } = {
  threads: true,
  turns: true,
  items: true,
  itemTextChunks: true,
  planSnapshots: true,
  proposedPlans: true,
  requests: true,
  prompts: true
}
void sameRows

/**
 * The one typing boundary between the engines: the PostgreSQL database and tables seen through
 * the SQLite types `projectionQueries` is written against. drizzle's dialects type their builders
 * apart and do not unify, but the builders the statements use (select/insert/update/delete,
 * values, set, where, onConflictDoNothing/DoUpdate) take the same calls on both, and the tables
 * have the same rows (`sameRows`). At run time everything is PostgreSQL's: its tables, its
 * column encoders, its dialect's rendering (`default` for an absent value, its conflict targets).
 * That every statement is valid PostgreSQL is tested (test/persistence/projectionStatements.test.ts).
 */
const asProjectionBuilder = (db: PgDb): { db: ProjectionQueryBuilder; tables: ProjectionTables } => ({
  db: db as unknown as ProjectionQueryBuilder,
  tables: schema as unknown as ProjectionTables
})

/** The projector's statements (../ProjectionQueries.ts) as drizzle builds them over the PostgreSQL schema. */
export const pgProjectionQueries = (db: PgDb) => {
  const { db: builder, tables } = asProjectionBuilder(db)
  return projectionQueries(builder, tables)
}

/**
 * The projector's statements for PostgreSQL, each prepared once as a named statement: the same
 * definition as SQLite's, so that both engines write the same rows and a change is made once.
 */
export const preparePgProjectionStatements = (db: PgDb): Record<ProjectionStatementName, PgStatement> =>
  Object.fromEntries(
    Object.entries(pgProjectionQueries(db)).map(([name, query]) => [name, preparePg(query)])
  ) as Record<ProjectionStatementName, PgStatement>
