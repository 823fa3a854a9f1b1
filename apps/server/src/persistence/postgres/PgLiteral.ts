import pg from "pg"

/**
 * Values written into SQL text, for the statements an append sends in one round trip (a
 * multi-statement simple query takes no parameters). Every value is a quoted literal, as
 * node-postgres sends parameters (text, typed by the column or context it lands in), escaped by
 * node-postgres's own `escapeLiteral` (which also handles backslashes and `E''` strings).
 *
 * PostgreSQL's text cannot hold U+0000 (SQLite's can): a NUL in a projected text (a provider's
 * tool output, streamed) is written as U+FFFD there, rather than failing the whole batch. The log
 * itself keeps it exactly: its JSON escapes it (`\u0000`).
 */
export const literal = (value: unknown): string => {
  if (value === null || value === undefined) return "NULL"
  if (typeof value === "string")
    return pg.escapeLiteral(value.includes("\u0000") ? value.replaceAll("\u0000", "\uFFFD") : value)
  if (typeof value === "number" || typeof value === "bigint") {
    if (typeof value === "number" && !Number.isFinite(value)) throw new Error(`not a SQL number: ${value}`)
    return `'${String(value)}'`
  }
  if (typeof value === "boolean") return value ? "'true'" : "'false'"
  throw new Error(`no SQL literal for a ${typeof value}`)
}

/** A `text[]` literal. */
export const textArray = (values: ReadonlyArray<string | null>): string =>
  values.length === 0 ? "'{}'::text[]" : `array[${values.map(literal).join(",")}]::text[]`

/** An `int[]` literal. */
export const intArray = (values: ReadonlyArray<number>): string =>
  values.length === 0 ? "'{}'::int[]" : `array[${values.map((v) => String(Math.trunc(v))).join(",")}]::int[]`
