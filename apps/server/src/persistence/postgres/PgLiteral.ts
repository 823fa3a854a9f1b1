/** The tag of the dollar-quoted literals (`$pb$…$pb$`). */
const TAG = "$pb$"

/**
 * A text as a string constant: dollar-quoted (`$pb$…$pb$`, nothing inside escaped) unless the text
 * holds the tag, then as node-postgres's `escapeLiteral` writes it (`'` doubled; with a backslash,
 * every backslash doubled and the literal an `E''` string). Dollar-quoting needs no pass over the
 * text: escaping a batch's ~150 kB of log JSON (thousands of `"` escaped as `\"`) one replacement at
 * a time cost ~12 ms a batch in Node, as much as PostgreSQL's whole INSERT (issue 32, ingest probe).
 */
export const quoteText = (text: string): string => {
  if (!text.includes(TAG)) return `${TAG}${text}${TAG}`
  return text.includes("\\")
    ? ` E'${text.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`
    : `'${text.replaceAll("'", "''")}'`
}

/**
 * Values written into SQL text, for the statements an append sends in one round trip (a
 * multi-statement simple query takes no parameters). Every value is a quoted literal, as
 * node-postgres sends parameters (text, typed by the column or context it lands in), quoted by
 * `quoteText`.
 *
 * PostgreSQL's text cannot hold U+0000 (SQLite's can): a NUL in a projected text (a provider's
 * tool output, streamed) is written as U+FFFD there, rather than failing the whole batch. The log
 * itself keeps it exactly: its JSON escapes it (`\u0000`).
 */
export const literal = (value: unknown): string => {
  const text = textOf(value)
  return text === null ? "NULL" : quoteText(text)
}

/** A value's text as PostgreSQL reads it (a NUL made U+FFFD, see above), or null for SQL NULL. */
const textOf = (value: unknown): string | null => {
  if (value === null || value === undefined) return null
  if (typeof value === "string") return value.includes("\u0000") ? value.replaceAll("\u0000", "\uFFFD") : value
  if (typeof value === "number" || typeof value === "bigint") {
    if (typeof value === "number" && !Number.isFinite(value)) throw new Error(`not a SQL number: ${value}`)
    return String(value)
  }
  if (typeof value === "boolean") return value ? "true" : "false"
  throw new Error(`no SQL literal for a ${typeof value}`)
}

const ARRAY_ESCAPED = /[\\"]/g
/** Where JSON may quote a text differently from an array element (control characters, surrogates). */
const MAYBE_JSON_ESCAPED = /[\u0000-\u001f\uD800-\uDFFF]/
/** What JSON does quote differently: control characters (`\n`…) and lone surrogates (`\uD800`). */
const JSON_ESCAPED = /[\u0000-\u001f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** An array element: the text double-quoted with its `"` and `\` escaped, NULL bare. */
const arrayElement = (text: string | null): string => {
  if (text === null) return "NULL"
  return JSON_ESCAPED.test(text) ? `"${text.replace(ARRAY_ESCAPED, "\\$&")}"` : JSON.stringify(text)
}

/**
 * An array of `type` as ONE literal (`'{"a","b",NULL}'::text[]`): each element double-quoted
 * with its `"` and `\` escaped (PostgreSQL's array input syntax), NULL bare. Not `array['a','b']`:
 * PostgreSQL parses, types and folds each element of that form as an expression of its own, which
 * for a batch's 2,500 log values took longer than the INSERT itself (probe on the ingest bench:
 * 23 ms to plan a `select … limit 0` of them, against 14 ms executing the insert; issue 32). For a
 * text without control characters or lone surrogates, JSON's string syntax is exactly that quoting,
 * so `JSON.stringify` (native) writes it: the whole array at once when no text has a control
 * character or any surrogate (20× faster than a replace each), else element by element.
 */
export const arrayLiteral = (values: ReadonlyArray<unknown>, type: string): string => {
  const texts = values.map(textOf)
  const body = texts.every((text) => text === null || !MAYBE_JSON_ESCAPED.test(text))
    ? JSON.stringify(texts).slice(1, -1)
    : texts.map(arrayElement).join(",")
  return `${quoteText(`{${body}}`)}::${type}[]`
}

/** A `text[]` literal. */
export const textArray = (values: ReadonlyArray<string | null>): string => arrayLiteral(values, "text")

/** An `int[]` literal. */
export const intArray = (values: ReadonlyArray<number>): string =>
  arrayLiteral(
    values.map((v) => Math.trunc(v)),
    "int"
  )
