import { getTableName, sql, type SQL } from "drizzle-orm"
import { items, itemTextChunks } from "./schema.ts"

const item = getTableName(items)
const chunks = getTableName(itemTextChunks)

/**
 * An item's whole text: the row's text (set when a text replaced the stream) followed by what
 * streamed since, in order (see `itemTextChunks`). Every reader of item text uses this. Written
 * with qualified names: drizzle leaves columns unqualified in a single-table select, which
 * inside the correlated subquery would compare the chunk table with itself.
 */
export const itemText: SQL<string> = sql<string>`(${sql.raw(`"${item}"."${items.text.name}"`)} || coalesce((
  select group_concat(c."${sql.raw(itemTextChunks.text.name)}", '' order by c."${sql.raw(itemTextChunks.firstSeq.name)}")
  from ${sql.raw(`"${chunks}"`)} c
  where c."${sql.raw(itemTextChunks.threadId.name)}" = ${sql.raw(`"${item}"."${items.threadId.name}"`)}
    and c."${sql.raw(itemTextChunks.turnId.name)}" = ${sql.raw(`"${item}"."${items.turnId.name}"`)}
    and c."${sql.raw(itemTextChunks.itemId.name)}" = ${sql.raw(`"${item}"."${items.itemId.name}"`)}
), ''))`

const qualified = (column: string) => sql.raw(`"${item}"."${column}"`)

/**
 * An item's snapshot JSON (its stored `json`, SnapshotRowJson.ts, whose last field is the row's
 * text) with its whole text instead: what a snapshot lists, however the text was split into
 * chunks. For comparisons (a rebuild's dump); snapshots splice the chunks in one pass.
 */
export const itemJson: SQL<string> = sql<string>`(substr(${qualified(items.json.name)}, 1, length(${qualified(items.json.name)}) - length(json_quote(${qualified(items.text.name)})) - 1) || json_quote(${itemText}) || '}')`
