import { projectionQueries } from "../ProjectionQueries.ts"
import type { ProjectionStatementName } from "../ProjectionStatements.ts"
import type { PgDb } from "./PgDatabase.ts"
import { pgStatementBuilder } from "./PgStatementBuilder.ts"
import { preparePg, type PgStatement } from "./PgStatement.ts"

/** The projector's statements (../ProjectionQueries.ts) as drizzle builds them over the PostgreSQL schema. */
export const pgProjectionQueries = (db: PgDb) => {
  const { db: builder, tables } = pgStatementBuilder(db)
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
