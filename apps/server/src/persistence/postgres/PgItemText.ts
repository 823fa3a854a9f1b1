import { getTableName, sql, type SQL } from "drizzle-orm"
import { PG_JSON_TEXT } from "../SnapshotRowJson.ts"
import { items, itemTextChunks } from "./schema.ts"

const item = getTableName(items)
const chunks = getTableName(itemTextChunks)

/**
 * An item's whole text on PostgreSQL: ../ItemText.ts with `string_agg` for SQLite's
 * `group_concat` (the row's text followed by its streamed chunks in `first_seq` order).
 */
export const pgItemText: SQL<string> = sql<string>`(${sql.raw(`"${item}"."${items.text.name}"`)} || coalesce((
  select string_agg(c."${sql.raw(itemTextChunks.text.name)}", '' order by c."${sql.raw(itemTextChunks.firstSeq.name)}")
  from ${sql.raw(`"${chunks}"`)} c
  where c."${sql.raw(itemTextChunks.threadId.name)}" = ${sql.raw(`"${item}"."${items.threadId.name}"`)}
    and c."${sql.raw(itemTextChunks.turnId.name)}" = ${sql.raw(`"${item}"."${items.turnId.name}"`)}
    and c."${sql.raw(itemTextChunks.itemId.name)}" = ${sql.raw(`"${item}"."${items.itemId.name}"`)}
), ''))`

const qualified = (column: string) => sql.raw(`"${item}"."${column}"`)
const jsonText = (value: SQL) => sql`${sql.raw(PG_JSON_TEXT)}(${value})`

/** An item's snapshot JSON with its whole text: ../ItemText.ts's `itemJson` on PostgreSQL. */
export const pgItemJson: SQL<string> = sql<string>`(left(${qualified(items.json.name)}, -(length(${jsonText(qualified(items.text.name))}) + 1)) || ${jsonText(pgItemText)} || '}')`
