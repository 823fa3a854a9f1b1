import { getTableName, type Column, type Table } from "drizzle-orm"
import type { Db } from "./Database.ts"
import { readSnapshotHeadRows, snapshotFromRows, type SnapshotRows } from "./ThreadSnapshots.ts"
import { items, itemTextChunks, prompts, proposedPlans, requests, turns } from "./schema.ts"

/**
 * A thread's snapshot as the JSON text clients receive, with its lists (turns, items, plans,
 * prompts, requests: nearly all of its size) concatenated by SQLite from each row's stored JSON
 * (the generated `json` columns, SnapshotRowJson.ts), one query per list. Building
 * them as JavaScript rows, decoding each JSON column with its Schema and serializing the result
 * cost ~80 ms for the 3.2 MB state of a 100k-event thread (issue 17); serializing each field in
 * the query ~31 ms. The JSON columns are embedded as stored: they hold what the projector
 * serialized from events Schema had decoded. Its value parses to `readThreadSnapshot`
 * (checked by test/persistence/snapshots.test.ts); PostgreSQL's lists: postgres/PgThreadSnapshots.ts.
 */

export interface SnapshotJson {
  /** The snapshot's `seq`: the thread's events after it apply on top. */
  readonly seq: number
  /** The `ThreadSnapshot` as JSON. */
  readonly json: string
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`
const col = (column: Column) => quoted(column.name)

/**
 * The JSON of each row of `table` for one thread, in `orderBy` order: its stored `json`
 * (SnapshotRowJson.ts), or `element`, an expression over the row `t` (and `join`). The caller
 * joins them into an array: as fast as a `group_concat` without order, and a third faster than
 * one with its `order by` (measured: 3.2 MB of state in 13 ms instead of 21).
 */
const listOf = (table: Table, threadId: Column, orderBy: ReadonlyArray<Column>, element = "t.json", join = "") =>
  `select ${element} from ${quoted(getTableName(table))} t ${join} where t.${col(threadId)} = @threadId ` +
  `order by ${orderBy.map((c) => `t.${col(c)}`).join(", ")}`

const chunks = quoted(getTableName(itemTextChunks))
/**
 * An item still streaming has text chunks after its row's text (`ItemText.ts`): the thread's
 * chunks are concatenated per item in one pass (`r`), and spliced into the item's stored JSON,
 * whose last field is its text: before its closing `"}`, the rest's JSON string without its
 * opening quote. Character counts, as SQLite's `length` and `substr` count text.
 */
const itemRests =
  `left join (select c.${col(itemTextChunks.itemId)} as item_id, group_concat(c.${col(itemTextChunks.text)}, '' ` +
  `order by c.${col(itemTextChunks.firstSeq)}) as rest from ${chunks} c ` +
  `where c.${col(itemTextChunks.threadId)} = @threadId group by c.${col(itemTextChunks.itemId)}) r ` +
  `on r.item_id = t.${col(items.itemId)}`
const itemWithRest =
  "case when r.rest is null then t.json " +
  "else substr(t.json, 1, length(t.json) - 2) || substr(json_quote(r.rest), 2) || '}' end"

/** The same lists and order as `snapshotFromRows`. */
const LISTS = {
  turns: listOf(turns, turns.threadId, [turns.startedAt, turns.turnId]),
  items: listOf(items, items.threadId, [items.startedAt, items.itemId], itemWithRest, itemRests),
  proposedPlans: listOf(proposedPlans, proposedPlans.threadId, [proposedPlans.createdAt, proposedPlans.planId]),
  prompts: listOf(prompts, prompts.threadId, [prompts.createdAt, prompts.promptId]),
  requests: listOf(requests, requests.threadId, [requests.createdAt, requests.requestId])
} as const
type ListName = keyof typeof LISTS
/** The lists in the order a snapshot has them. */
const LIST_NAMES = Object.keys(LISTS) as ReadonlyArray<ListName>

const prepareLists = (db: Db) => {
  const entries = Object.entries(LISTS).map(([name, text]) => [name, db.$client.prepare(text).pluck()] as const)
  return Object.fromEntries(entries) as Record<ListName, ReturnType<Db["$client"]["prepare"]>>
}
const listsByDb = new WeakMap<Db, ReturnType<typeof prepareLists>>()
const listsFor = (db: Db) => listsByDb.get(db) ?? listsByDb.set(db, prepareLists(db)).get(db)!

export type SnapshotListName = ListName

/**
 * A snapshot's JSON from its head rows and, for each list, its rows' JSON in order (both
 * engines): the head serialized, the lists joined as they are.
 */
export const snapshotJsonOf = (
  head: Pick<SnapshotRows, "thread" | "latestPlan" | "revisions">,
  lists: Readonly<Record<ListName, ReadonlyArray<string>>>
): SnapshotJson => {
  const {
    turns: _t,
    items: _i,
    proposedPlans: _p,
    prompts: _q,
    requests: _r,
    ...rest
  } = snapshotFromRows({ ...head, turns: [], items: [], proposedPlans: [], prompts: [], requests: [] })
  const listed = LIST_NAMES.map((name) => `,"${name}":[${lists[name].join(",")}]`).join("")
  // `rest` always has its `threadId`, so its JSON is never `{}`.
  return { seq: rest.seq, json: `${JSON.stringify(rest).slice(0, -1)}${listed}}` }
}

/**
 * The snapshot of `threadId` as JSON, or undefined when there is no such thread. Read
 * synchronously from the one connection, so every part is as of the same `seq`.
 */
export const readThreadSnapshotJson = (db: Db, threadId: string): SnapshotJson | undefined => {
  const head = readSnapshotHeadRows(db, threadId)
  if (head === undefined) return undefined
  const statements = listsFor(db)
  const list = (name: ListName) => statements[name].all({ threadId }) as Array<string>
  return snapshotJsonOf(head, {
    turns: list("turns"),
    items: list("items"),
    proposedPlans: list("proposedPlans"),
    prompts: list("prompts"),
    requests: list("requests")
  })
}
