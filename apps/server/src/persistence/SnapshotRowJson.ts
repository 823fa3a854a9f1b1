import { sql, type SQL } from "drizzle-orm"

/**
 * Each projected row's part of a thread snapshot, as the JSON text clients receive: a stored
 * generated column (`json`) on turns, items, proposed plans, prompts and requests, which the
 * database writes with the row in the statement that writes it (so in the append's transaction,
 * and a `rebuild` rewrites it with the rows). A snapshot is then a concatenation of stored text
 * (ThreadSnapshotJson.ts) instead of a serialization of every field of every row (issue 17:
 * 31 → 10 ms for the 3.2 MB state of a 100k-event thread).
 * The fields, their order and defaults are `snapshotFromRows`'s (ThreadSnapshots.ts).
 */

/** How a column's value becomes JSON. */
type Kind =
  /** Text (or NULL) as a JSON string. */
  | "text"
  /** JSON text the projector wrote (or NULL), embedded as it is. */
  | "json"
  /** The projections keep `pending` or a resolution; a snapshot says `pending` or `resolved`. */
  | "openOrResolved"
  /** JSON text, `[]` when NULL. */
  | "list"

export type RowField = readonly [key: string, column: string, kind: Kind]

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`

/**
 * PostgreSQL's JSON quoting of a text (or NULL) in a generated column: to_json is not IMMUTABLE,
 * so a migration (migrations/postgres/0002_json_text_function.sql) wraps it.
 */
export const PG_JSON_TEXT = "planbridge_json_text"

const valueOf = (column: string, kind: Kind, quote: string): string => {
  const c = quoted(column)
  switch (kind) {
    case "text":
      return `${quote}(${c})`
    case "json":
      return `coalesce(${c}, 'null')`
    case "openOrResolved":
      return `case ${c} when 'pending' then '"pending"' else '"resolved"' end`
    case "list":
      return `coalesce(${c}, '[]')`
  }
}

const rowJson = (fields: ReadonlyArray<RowField>, quote: string): SQL =>
  sql.raw(
    fields
      .map(([key, column, kind], i) => `'${i === 0 ? "{" : ","}"${key}":' || ${valueOf(column, kind, quote)}`)
      .join(" || ") + ` || '}'`
  )

/** The SQLite expression of one row's JSON object: text concatenated, no JSON function parses a column again. */
export const sqliteRowJson = (fields: ReadonlyArray<RowField>): SQL => rowJson(fields, "json_quote")
/** The same on PostgreSQL. */
export const pgRowJson = (fields: ReadonlyArray<RowField>): SQL => rowJson(fields, PG_JSON_TEXT)

export const TURN_FIELDS: ReadonlyArray<RowField> = [
  ["turnId", "turn_id", "text"],
  ["status", "status", "text"],
  ["mode", "mode", "text"],
  ["error", "error", "json"],
  ["usage", "usage", "json"],
  ["startedAt", "started_at", "text"],
  ["completedAt", "completed_at", "text"]
]

/**
 * `text` is last: an item still streaming has chunks (`item_text_chunks`) that a snapshot
 * splices in before the closing `"}` (ThreadSnapshotJson.ts).
 */
export const ITEM_FIELDS: ReadonlyArray<RowField> = [
  ["itemId", "item_id", "text"],
  ["turnId", "turn_id", "text"],
  ["itemType", "item_type", "text"],
  ["status", "status", "text"],
  ["title", "title", "text"],
  ["toolName", "tool_name", "text"],
  ["startedAt", "started_at", "text"],
  ["completedAt", "completed_at", "text"],
  ["text", "text", "text"]
]

export const PROPOSED_PLAN_FIELDS: ReadonlyArray<RowField> = [
  ["planId", "plan_id", "text"],
  ["turnId", "turn_id", "text"],
  ["status", "status", "text"],
  ["streamedText", "streamed_text", "text"],
  ["markdown", "markdown", "text"],
  ["filePath", "file_path", "text"],
  ["decision", "decision", "text"],
  ["feedback", "feedback", "text"],
  ["editedMarkdown", "edited_markdown", "text"],
  ["createdAt", "created_at", "text"],
  ["resolvedBy", "resolved_by", "json"]
]

export const PROMPT_FIELDS: ReadonlyArray<RowField> = [
  ["promptId", "prompt_id", "text"],
  ["turnId", "turn_id", "text"],
  ["requestId", "request_id", "text"],
  ["prompt", "prompt", "json"],
  ["status", "status", "openOrResolved"],
  ["resolution", "resolution", "text"],
  ["answers", "answers", "json"],
  ["reason", "reason", "text"],
  ["createdAt", "created_at", "text"],
  ["resolvedAt", "resolved_at", "text"],
  ["resolvedBy", "resolved_by", "json"]
]

export const REQUEST_FIELDS: ReadonlyArray<RowField> = [
  ["requestId", "request_id", "text"],
  ["turnId", "turn_id", "text"],
  ["kind", "kind", "text"],
  ["title", "title", "text"],
  ["detail", "detail", "text"],
  ["options", "options", "list"],
  ["status", "status", "openOrResolved"],
  ["resolution", "resolution", "text"],
  ["optionId", "option_id", "text"],
  ["promptId", "prompt_id", "text"],
  ["planId", "plan_id", "text"],
  ["createdAt", "created_at", "text"],
  ["resolvedBy", "resolved_by", "json"]
]
