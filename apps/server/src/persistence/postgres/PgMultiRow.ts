import { is } from "drizzle-orm"
import { getTableConfig, PgTable } from "drizzle-orm/pg-core"
import { arrayLiteral, literal } from "./PgLiteral.ts"
import type { PgStatement } from "./PgStatement.ts"
import * as schema from "./schema.ts"

/**
 * One statement's many-row form: the rows' values (each row bound as the one-row statement binds
 * it) as arrays `unnest`ed into one statement. Parameters outside the row (an upsert's flags in its
 * `do update`, an update's `coalesce`) become columns of the `unnest` too, except where PostgreSQL
 * cannot read them (`on conflict … do update` sees the proposed row only): there they are written
 * in as literals, and rows are grouped by them (`groupOf`).
 */
export interface MultiRow {
  /** Rows with the same group may go into one statement. */
  readonly groupOf: (bound: ReadonlyArray<unknown>) => string
  /** The statement for rows of one group, each row's values at most once per key (one write a row). */
  readonly sql: (rows: ReadonlyArray<ReadonlyArray<unknown>>) => string
}

/** Each table's columns' SQL types, by table then column name, from the PostgreSQL schema. */
const columnTypes = new Map<string, Map<string, string>>(
  Object.values(schema).flatMap((table) => {
    if (!is(table, PgTable)) return []
    const config = getTableConfig(table)
    return [[config.name, new Map(config.columns.map((c) => [c.name, c.getSQLType()]))]]
  })
)

/** A typed array literal of one column of the rows. */
const arrayOf = (rows: ReadonlyArray<ReadonlyArray<unknown>>, index: number, type: string): string =>
  arrayLiteral(
    rows.map((row) => row[index]),
    type
  )

const INSERT = /^insert into "(\w+)" \(([^)]*)\) values \(([^)]*)\)(.*)$/s
const UPDATE = /^update "(\w+)" set (.*) where \(?(.*?)\)?$/s
/** One condition of an update's `where` (they are joined by `and`): a column equal to a parameter. */
const CONDITION = /^"(\w+)"\."(\w+)" = \$(\d+)$/
/** In an update's `set`: each column assigned and the expression up to the next assignment. */
const ASSIGNMENT = /"(\w+)" = ((?:(?!, "\w+" = ).)*)/gs

/**
 * The many-row form of a one-row `insert … values ($1, …, $k) [on conflict …]` (some values
 * may be `default`) or
 * `update … set … where "t"."a" = $n [and "t"."b" = $m …]` as drizzle renders them (ProjectionQueries.ts), or
 * undefined for any other shape (it then runs row by row).
 */
export const multiRowOf = (statement: PgStatement): MultiRow | undefined => {
  const insert = INSERT.exec(statement.text)
  if (insert !== null) {
    const [, table, columnList, valueList, rest] = insert as unknown as [string, string, string, string, string]
    const values = valueList.split(", ")
    // A column given `default` is left out of the many-row form (an insert gives it its default).
    const columns = columnList
      .split(", ")
      .map((c) => c.replaceAll('"', ""))
      .filter((_, i) => values[i] !== "default")
    const bound = values.filter((v) => v !== "default")
    const types = columnTypes.get(table)
    if (types === undefined || bound.some((v, i) => v !== `$${i + 1}`)) return undefined
    if (columns.some((c) => !types.has(c))) return undefined
    const k = bound.length
    return {
      groupOf: (bound) => JSON.stringify(bound.slice(k)),
      sql: (rows) =>
        `insert into "${table}" (${columns.map((c) => `"${c}"`).join(", ")}) select * from unnest(${columns
          .map((c, i) => arrayOf(rows, i, types.get(c)!))
          .join(", ")})${rest.replace(/\$(\d+)/g, (_, n: string) => literal(rows[0]![Number(n) - 1]))}`
    }
  }
  const update = UPDATE.exec(statement.text)
  if (update !== null) {
    const [, table, setClause, where] = update as unknown as [string, string, string, string]
    const types = columnTypes.get(table)
    if (types === undefined) return undefined
    // Each parameter's type: the column it is compared with (the `where`) or assigned to.
    const paramTypes = new Map<number, string>()
    const conditions: Array<[column: string, param: number]> = []
    for (const condition of where.split(" and ")) {
      const match = CONDITION.exec(condition)
      if (match === null || match[1] !== table || !types.has(match[2]!) || paramTypes.has(Number(match[3])))
        return undefined
      conditions.push([match[2]!, Number(match[3])])
      paramTypes.set(Number(match[3]), types.get(match[2]!)!)
    }
    for (const [, column, expression] of setClause.matchAll(ASSIGNMENT))
      for (const [, n] of expression!.matchAll(/\$(\d+)/g)) {
        const type = types.get(column!)
        if (type === undefined || paramTypes.has(Number(n))) return undefined
        paramTypes.set(Number(n), type)
      }
    const params = [...paramTypes.keys()].sort((a, b) => a - b)
    if (params.some((n, i) => n !== i + 1)) return undefined
    return {
      groupOf: () => "",
      sql: (rows) =>
        `update "${table}" set ${setClause.replace(/\$(\d+)/g, (_, n: string) => `v.p${n}`)} from unnest(${params
          .map((n) => arrayOf(rows, n - 1, paramTypes.get(n)!))
          .join(", ")}) as v(${params.map((n) => `p${n}`).join(", ")}) where ${conditions
          .map(([column, n]) => `"${table}"."${column}" = v.p${n}`)
          .join(" and ")}`
    }
  }
  return undefined
}
