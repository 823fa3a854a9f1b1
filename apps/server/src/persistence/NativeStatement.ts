import type BetterSqlite3 from "better-sqlite3"
import { is, Param, Placeholder } from "drizzle-orm"

type Named = Record<string, unknown>
type Binding = { readonly name: string; readonly encode?: (value: unknown) => unknown } | { readonly value: unknown }

export interface NativeStatement {
  readonly run: (values: Named) => BetterSqlite3.RunResult
  readonly get: <R>(values: Named) => R | undefined
}

/**
 * Prepares a drizzle-built query directly on the better-sqlite3 connection: drizzle writes the
 * SQL from the typed schema, better-sqlite3 runs it. On the ingestion hot path drizzle's own
 * prepared-query wrapper (placeholder filling, result mapping) cost as much as SQLite itself.
 */
export const prepareNative = (sqlite: BetterSqlite3.Database, query: { toSQL: () => { sql: string; params: Array<unknown> } }): NativeStatement => {
  const built = query.toSQL()
  const statement = sqlite.prepare(built.sql)
  const bindings: ReadonlyArray<Binding> = built.params.map((param): Binding => {
    if (is(param, Placeholder)) return { name: param.name as string }
    if (is(param, Param)) {
      const encoder = param.encoder
      const encode = encoder === undefined ? undefined : (v: unknown) => encoder.mapToDriverValue(v)
      if (is(param.value, Placeholder)) return encode === undefined ? { name: param.value.name as string } : { name: param.value.name as string, encode }
      return { value: encode === undefined ? param.value : encode(param.value) }
    }
    return { value: param }
  })
  const bind = (values: Named): Array<unknown> =>
    bindings.map((binding) => {
      if (!("name" in binding)) return binding.value
      const value = values[binding.name]
      if (value === undefined) throw new Error(`no value for placeholder '${binding.name}' in: ${built.sql}`)
      return binding.encode === undefined || value === null ? value : binding.encode(value)
    })
  return {
    run: (values) => statement.run(bind(values)),
    get: <R>(values: Named) => statement.get(bind(values)) as R | undefined
  }
}
