import type BetterSqlite3 from "better-sqlite3"
import { is, Param, Placeholder } from "drizzle-orm"

type Named = Record<string, unknown>

export interface NativeStatement {
  readonly run: (values: Named) => BetterSqlite3.RunResult
  readonly get: <R>(values: Named) => R | undefined
  readonly all: <R>(values: Named) => Array<R>
}

/**
 * Prepares a drizzle-built query directly on the better-sqlite3 connection: drizzle writes the
 * SQL from the typed schema, better-sqlite3 runs it. On the ingestion hot path drizzle's own
 * prepared-query wrapper (placeholder filling, result mapping) cost as much as SQLite itself.
 */
export const prepareNative = (
  sqlite: BetterSqlite3.Database,
  query: { toSQL: () => { sql: string; params: Array<unknown> } }
): NativeStatement => {
  const built = query.toSQL()
  const statement = sqlite.prepare(built.sql)
  const bind = placeholderBinder(built)
  return {
    run: (values) => statement.run(bind(values)),
    get: <R>(values: Named) => statement.get(bind(values)) as R | undefined,
    all: <R>(values: Named) => statement.all(bind(values)) as Array<R>
  }
}

/**
 * The parameters of a drizzle-built query for named values, whatever the engine: its
 * placeholders filled by name, its constants as drizzle encoded them. The parameter list is
 * resolved once into parallel arrays (placeholder name or constant, and an optional encoder), so
 * that binding a call is one loop filling one array.
 */
export const placeholderBinder = (built: { sql: string; params: Array<unknown> }) => {
  const count = built.params.length
  /** The placeholder name at each position, or undefined where the value is a constant. */
  const names: Array<string | undefined> = []
  const constants: Array<unknown> = []
  const encoders: Array<((value: unknown) => unknown) | undefined> = []
  for (const param of built.params) {
    let name: string | undefined
    let constant: unknown = param
    let encode: ((value: unknown) => unknown) | undefined
    if (is(param, Placeholder)) name = param.name as string
    else if (is(param, Param)) {
      const encoder = param.encoder
      encode = encoder === undefined ? undefined : (v: unknown) => encoder.mapToDriverValue(v)
      if (is(param.value, Placeholder)) name = param.value.name as string
      else {
        constant = encode === undefined ? param.value : encode(param.value)
        encode = undefined
      }
    }
    names.push(name)
    constants.push(name === undefined ? constant : undefined)
    encoders.push(name === undefined ? undefined : encode)
  }
  return (values: Named): Array<unknown> => {
    const bound = new Array<unknown>(count)
    for (let i = 0; i < count; i++) {
      const name = names[i]
      if (name === undefined) {
        bound[i] = constants[i]
        continue
      }
      const value = values[name]
      if (value === undefined) throw new Error(`no value for placeholder '${name}' in: ${built.sql}`)
      const encode = encoders[i]
      bound[i] = encode === undefined || value === null ? value : encode(value)
    }
    return bound
  }
}
