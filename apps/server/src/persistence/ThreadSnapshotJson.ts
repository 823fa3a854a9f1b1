import { getTableName, type Column, type Table } from "drizzle-orm"
import type { Db } from "./Database.ts"
import { readSnapshotHeadRows, snapshotFromRows } from "./ThreadSnapshots.ts"
import { items, itemTextChunks, prompts, proposedPlans, requests, turns } from "./schema.ts"

/**
 * A thread's snapshot as the JSON text clients receive, with its lists (turns, items, plans,
 * prompts, requests: nearly all of its size) written by SQLite itself, one `group_concat`
 * per list. Building them as JavaScript rows, decoding each JSON column with its Schema and
 * serializing the result cost ~80 ms for the 3.2 MB state of a 100k-event thread (issue 17).
 * The JSON columns are spliced as stored: they hold what the projector serialized from events
 * Schema had decoded. Its value parses to `readThreadSnapshot`
 * (checked by test/persistence/snapshotJson.test.ts); PostgreSQL serializes that object instead.
 */

export interface SnapshotJson {
  /** The snapshot's `seq`: the thread's events after it apply on top. */
  readonly seq: number
  /** The `ThreadSnapshot` as JSON. */
  readonly json: string
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`
const col = (column: Column) => quoted(column.name)
/** Object keys and SQL expressions giving each value's JSON text. */
type Fields = ReadonlyArray<readonly [key: string, json: string]>

/**
 * The rows of `table` for one thread as a JSON array of objects, in `orderBy` order: the text
 * concatenated, not built with `json_object`, which would parse every JSON column again.
 */
const listOf = (table: Table, threadId: Column, fields: Fields, orderBy: ReadonlyArray<Column>, join = "") => {
  const object = fields.map(([key, json], i) => `'${i === 0 ? "{" : ","}"${key}":' || ${json}`).join(" || ")
  const order = orderBy.map((c) => `t.${col(c)}`).join(", ")
  return (
    `select '[' || coalesce(group_concat(${object} || '}', ',' order by ${order}), '') || ']' ` +
    `from ${quoted(getTableName(table))} t ${join} where t.${col(threadId)} = @threadId`
  )
}
/** A text column (or NULL) as a JSON string. */
const field = (key: string, column: Column): readonly [string, string] => [key, `json_quote(t.${col(column)})`]
/** A column holding JSON text (or NULL), embedded as it is: the projector wrote it with JSON.stringify. */
const jsonField = (key: string, column: Column): readonly [string, string] => [
  key,
  `coalesce(t.${col(column)}, 'null')`
]
/** The projections keep `pending` or a resolution; a snapshot says `pending` or `resolved`. */
const openOrResolved = (column: Column) => `case t.${col(column)} when 'pending' then '"pending"' else '"resolved"' end`

const chunks = quoted(getTableName(itemTextChunks))
/**
 * An item's whole text, as `ItemText.ts` reads it: the row's text, then its chunks in order.
 * The thread's chunks are concatenated per item in one pass (`r`, joined in `listOf`'s query)
 * rather than by a look-up per item.
 */
const itemText = `t.${col(items.text)} || coalesce(r.rest, '')`
const itemRests =
  `left join (select c.${col(itemTextChunks.itemId)} as item_id, group_concat(c.${col(itemTextChunks.text)}, '' ` +
  `order by c.${col(itemTextChunks.firstSeq)}) as rest from ${chunks} c ` +
  `where c.${col(itemTextChunks.threadId)} = @threadId group by c.${col(itemTextChunks.itemId)}) r ` +
  `on r.item_id = t.${col(items.itemId)}`

/** The same fields, order and defaults as `snapshotFromRows`. */
const LISTS = {
  turns: listOf(
    turns,
    turns.threadId,
    [
      field("turnId", turns.turnId),
      field("status", turns.status),
      field("mode", turns.mode),
      jsonField("error", turns.error),
      jsonField("usage", turns.usage),
      field("startedAt", turns.startedAt),
      field("completedAt", turns.completedAt)
    ],
    [turns.startedAt, turns.turnId]
  ),
  items: listOf(
    items,
    items.threadId,
    [
      field("itemId", items.itemId),
      field("turnId", items.turnId),
      field("itemType", items.itemType),
      field("status", items.status),
      field("title", items.title),
      field("toolName", items.toolName),
      ["text", `json_quote(${itemText})`],
      field("startedAt", items.startedAt),
      field("completedAt", items.completedAt)
    ],
    [items.startedAt, items.itemId],
    itemRests
  ),
  proposedPlans: listOf(
    proposedPlans,
    proposedPlans.threadId,
    [
      field("planId", proposedPlans.planId),
      field("turnId", proposedPlans.turnId),
      field("status", proposedPlans.status),
      field("streamedText", proposedPlans.streamedText),
      field("markdown", proposedPlans.markdown),
      field("filePath", proposedPlans.filePath),
      field("decision", proposedPlans.decision),
      field("feedback", proposedPlans.feedback),
      field("editedMarkdown", proposedPlans.editedMarkdown),
      field("createdAt", proposedPlans.createdAt)
    ],
    [proposedPlans.createdAt, proposedPlans.planId]
  ),
  prompts: listOf(
    prompts,
    prompts.threadId,
    [
      field("promptId", prompts.promptId),
      field("turnId", prompts.turnId),
      field("requestId", prompts.requestId),
      jsonField("prompt", prompts.prompt),
      ["status", openOrResolved(prompts.status)],
      field("resolution", prompts.resolution),
      jsonField("answers", prompts.answers),
      field("reason", prompts.reason),
      field("createdAt", prompts.createdAt),
      field("resolvedAt", prompts.resolvedAt)
    ],
    [prompts.createdAt, prompts.promptId]
  ),
  requests: listOf(
    requests,
    requests.threadId,
    [
      field("requestId", requests.requestId),
      field("turnId", requests.turnId),
      field("kind", requests.kind),
      field("title", requests.title),
      field("detail", requests.detail),
      ["options", `coalesce(t.${col(requests.options)}, '[]')`],
      ["status", openOrResolved(requests.status)],
      field("resolution", requests.resolution),
      field("optionId", requests.optionId),
      field("promptId", requests.promptId),
      field("planId", requests.planId),
      field("createdAt", requests.createdAt)
    ],
    [requests.createdAt, requests.requestId]
  )
} as const
type ListName = keyof typeof LISTS

const prepareLists = (db: Db) => {
  const entries = Object.entries(LISTS).map(([name, text]) => [name, db.$client.prepare(text).pluck()] as const)
  return Object.fromEntries(entries) as Record<ListName, ReturnType<Db["$client"]["prepare"]>>
}
const listsByDb = new WeakMap<Db, ReturnType<typeof prepareLists>>()
const listsFor = (db: Db) => listsByDb.get(db) ?? listsByDb.set(db, prepareLists(db)).get(db)!

/**
 * The snapshot of `threadId` as JSON, or undefined when there is no such thread. Read
 * synchronously from the one connection, so every part is as of the same `seq`.
 */
export const readThreadSnapshotJson = (db: Db, threadId: string): SnapshotJson | undefined => {
  const head = readSnapshotHeadRows(db, threadId)
  if (head === undefined) return undefined
  const {
    turns: _t,
    items: _i,
    proposedPlans: _p,
    prompts: _q,
    requests: _r,
    ...rest
  } = snapshotFromRows({
    ...head,
    turns: [],
    items: [],
    proposedPlans: [],
    prompts: [],
    requests: []
  })
  const statements = listsFor(db)
  const list = (name: ListName) => `,"${name}":${statements[name].get({ threadId }) as string}`
  const lists = (Object.keys(LISTS) as Array<ListName>).map(list).join("")
  // `rest` always has its `threadId`, so its JSON is never `{}`.
  return { seq: rest.seq, json: `${JSON.stringify(rest).slice(0, -1)}${lists}}` }
}
