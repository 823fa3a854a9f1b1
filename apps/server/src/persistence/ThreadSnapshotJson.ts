import type { Db } from "./Database.ts"
import { catchUpProjections } from "./ProjectionLag.ts"
import {
  HISTORY_LISTS,
  historySql,
  pageJsonOf,
  pagePlan,
  runPlanSync,
  windowPlan,
  type HistoryQuery,
  type HistoryRange,
  type PageRefusal
} from "./ThreadHistory.ts"
import { readSnapshotHeadRows, snapshotFromRows, type SnapshotRows } from "./ThreadSnapshots.ts"

/**
 * A thread's snapshot window and its history pages (ThreadHistory.ts) as the JSON text clients
 * receive, on SQLite: the lists are the rows' stored JSON (the generated `json` columns,
 * SnapshotRowJson.ts) joined without parsing, the small head serialized. Building rows as
 * JavaScript objects, decoding and serializing them cost ~80 ms for the 3.2 MB state of a
 * 100k-event thread (issue 17); the window keeps the text itself bounded. Its value parses to
 * the same records as `readThreadSnapshot` (checked by test/persistence/snapshots.test.ts);
 * PostgreSQL's: postgres/PgThreadSnapshots.ts.
 */

export interface SnapshotJson {
  /** The snapshot's (or page's) `seq`: the thread's events after it apply on top. */
  readonly seq: number
  /** The `ThreadSnapshot` (or `ThreadHistoryPage`) as JSON. */
  readonly json: string
}

/**
 * An item still streaming has text chunks after its row's text (`ItemText.ts`): they are
 * concatenated (`rest`) and spliced into the item's stored JSON, whose last field is its text:
 * before its closing `"}`, the rest's JSON string without its opening quote. Character counts,
 * as SQLite's `length` and `substr` count text.
 */
const rest =
  "(select group_concat(c.text, '' order by c.first_seq) from item_text_chunks c " +
  "where c.thread_id = t.thread_id and c.turn_id = t.turn_id and c.item_id = t.item_id)"
const SQLITE_HISTORY = historySql({
  itemJson:
    `case when ${rest} is null then t.json ` +
    `else substr(t.json, 1, length(t.json) - 2) || substr(json_quote(${rest}), 2) || '}' end`,
  pendingIndex: (table) => `indexed by ${table}_thread_pending`
})

type Statement = ReturnType<Db["$client"]["prepare"]>
const statementsByDb = new WeakMap<Db, Map<string, Statement>>()
/** Runs one of the history statements, prepared once per connection. */
const runner = (db: Db) => {
  let prepared = statementsByDb.get(db)
  if (prepared === undefined) statementsByDb.set(db, (prepared = new Map()))
  const cache = prepared
  return (query: HistoryQuery) => {
    let statement = cache.get(query.sql)
    if (statement === undefined) cache.set(query.sql, (statement = db.$client.prepare(query.sql)))
    return statement.all(query.params) as Array<Record<string, unknown>>
  }
}

/** A snapshot's JSON from its head rows and its window (both engines): the head serialized, the lists joined as they are. */
export const snapshotJsonOf = (
  head: Pick<SnapshotRows, "thread" | "latestPlan">,
  window: HistoryRange
): SnapshotJson => {
  const {
    turns: _t,
    items: _i,
    proposedPlans: _p,
    prompts: _q,
    requests: _r,
    ...rest
  } = snapshotFromRows({ ...head, revisions: [], turns: [], items: [], proposedPlans: [], prompts: [], requests: [] })
  const listed = HISTORY_LISTS.map((name) => `,"${name}":[${window.lists[name].join(",")}]`).join("")
  const whole = { ...rest, planRevisions: window.planRevisions, olderTurns: window.olderTurns }
  // `whole` always has its `threadId`, so its JSON is never `{}`.
  return { seq: rest.seq, json: `${JSON.stringify(whole).slice(0, -1)}${listed}}` }
}

/**
 * The snapshot of `threadId` with its latest `turns` turns, as JSON, or undefined when there is
 * no such thread. Read synchronously from the one connection, so every part is as of the same `seq`.
 */
export const readThreadSnapshotJson = (db: Db, threadId: string, turns: number): SnapshotJson | undefined => {
  catchUpProjections(db)
  const head = readSnapshotHeadRows(db, threadId)
  if (head === undefined) return undefined
  return snapshotJsonOf(head, runPlanSync(windowPlan(SQLITE_HISTORY, threadId, turns), runner(db)))
}

/** The page of `limit` turns before the turn `before`, as JSON (`ThreadHistoryPage`), or why not. */
export const readThreadHistoryJson = (
  db: Db,
  threadId: string,
  before: string,
  limit: number
): SnapshotJson | PageRefusal => {
  catchUpProjections(db)
  const page = runPlanSync(pagePlan(SQLITE_HISTORY, threadId, before, limit), runner(db))
  return typeof page === "string" ? page : { seq: page.seq, json: pageJsonOf(threadId, page) }
}
