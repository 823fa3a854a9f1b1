import type { Db } from "./Database.ts"
import { prepareNative, type NativeStatement } from "./NativeStatement.ts"
import { projectionQueries } from "./ProjectionQueries.ts"
import * as schema from "./schema.ts"

/**
 * The projector's statements (ProjectionQueries.ts) built over the SQLite schema and prepared
 * once on the connection: building SQL per event cost far more than executing it.
 */
export const prepareProjectionStatements = (db: Db): Record<ProjectionStatementName, NativeStatement> => {
  const queries = projectionQueries(db, schema)
  const native = db.$client
  return Object.fromEntries(
    Object.entries(queries).map(([name, query]) => [name, prepareNative(native, query)])
  ) as Record<ProjectionStatementName, NativeStatement>
}

/** The projector's statements by name, the same for both engines. */
export type ProjectionStatementName = keyof ReturnType<typeof projectionQueries>

/**
 * One of the projector's statements as an engine runs it: SQLite runs it on the spot; the
 * PostgreSQL store queues writes for the transaction and answers the two reads (`threadExists`,
 * `lastRevision`) from what it loaded before the batch (postgres/PgProjectionSink.ts).
 */
export interface ProjectionStatement {
  readonly run: (values: Record<string, unknown>) => unknown
  readonly get: <R>(values: Record<string, unknown>) => R | undefined
}
export type ProjectionStatements = Record<ProjectionStatementName, ProjectionStatement>
