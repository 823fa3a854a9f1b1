import { createHash } from "node:crypto"
import type pg from "pg"
import { placeholderBinder } from "../NativeStatement.ts"

type Named = Record<string, unknown>

/** A drizzle-built query with its parameters bound by name, run on a connection or the pool. */
export interface PgStatement {
  /** The name of its server-side prepared statement. */
  readonly name: string
  readonly text: string
  readonly bind: (values: Named) => Array<unknown>
  readonly rows: <R>(on: pg.Pool | pg.PoolClient | pg.Client, values: Named) => Promise<Array<R>>
}

/**
 * Prepares a drizzle-built PostgreSQL query once: its SQL, a named server-side prepared
 * statement (each connection parses it on first use only) and its parameters filled by name
 * (NativeStatement.ts's binder, shared with SQLite).
 */
export const preparePg = (query: { toSQL: () => { sql: string; params: Array<unknown> } }): PgStatement => {
  const built = query.toSQL()
  const bind = placeholderBinder(built)
  const name = `pb_${createHash("sha256").update(built.sql).digest("hex").slice(0, 24)}`
  return {
    name,
    text: built.sql,
    bind,
    rows: async <R>(on: pg.Pool | pg.PoolClient | pg.Client, values: Named) => {
      const result = await on.query({ name, text: built.sql, values: bind(values) })
      return result.rows as Array<R>
    }
  }
}
