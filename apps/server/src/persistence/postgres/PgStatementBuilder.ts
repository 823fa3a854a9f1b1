import type { StatementBuilder, StatementTables } from "../StatementBuilder.ts"
import type { PgDb } from "./PgDatabase.ts"
import * as schema from "./schema.ts"

/** Whether two types are the same (each assignable to the other). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type Rows = { $inferInsert: unknown; $inferSelect: unknown }
type SameRows<A extends Rows, B extends Rows> =
  Same<A["$inferInsert"], B["$inferInsert"]> extends true ? Same<A["$inferSelect"], B["$inferSelect"]> : false

/**
 * Checked by the compiler: each PostgreSQL table the shared statements use has the same rows
 * (same columns, same value types) as its SQLite twin, which `pgStatementBuilder` relies on.
 */
const sameRows: { [K in keyof StatementTables]: SameRows<StatementTables[K], (typeof schema)[K]> } = {
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
 * the SQLite types the shared statements (../ProjectionQueries.ts, ../ThreadSnapshots.ts) are
 * written against. drizzle's dialects type their builders apart and do not unify, but the
 * builders those statements use (select/insert/update/delete, from, values, set, where, groupBy,
 * orderBy, onConflictDoNothing/DoUpdate) take the same calls on both, and the tables have the
 * same rows (`sameRows`). At run time everything is PostgreSQL's: its tables, its column
 * encoders, its dialect's rendering (`default` for an absent value, its conflict targets). That
 * every projection statement is valid PostgreSQL is tested on its own
 * (test/persistence/projectionStatements.test.ts); the snapshot's run in the snapshot tests of
 * both engines.
 */
export const pgStatementBuilder = (db: PgDb): { readonly db: StatementBuilder; readonly tables: StatementTables } => ({
  db: db as unknown as StatementBuilder,
  tables: schema as unknown as StatementTables
})
