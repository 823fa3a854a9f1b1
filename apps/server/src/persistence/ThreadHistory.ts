import type { OlderTurns } from "@planbridge/contracts"

/**
 * What a snapshot's window and a history page hold, for both engines (issue 17: a snapshot
 * should cost in proportion to the thread's state, not to its history).
 *
 * A thread's history is one timeline: each turn, item, proposed plan, prompt and request has a
 * key, its creation time then its id (`started_at` for turns and items, `created_at` for the
 * others), the order snapshots list them in. Turn keys cut the timeline into ranges
 * `[from, to)`, and a range holds every record whose own key falls in it: a turn's items, plans,
 * prompts and requests come with it, and so do records of no turn (or of a turn without a row),
 * so that the window and every page back hold each record exactly once.
 * - The window of `n` turns: from the key of the n-th latest turn (the thread's start when it has
 *   fewer), to now. A snapshot adds the prompts and requests still pending from before it (the
 *   newest `PENDING_BEFORE_MAX` of each): they are state, not history (a page holds them again,
 *   as they are then).
 * - A page of `limit` turns before the turn `before`: from the key of the limit-th turn before
 *   it (or the start), to the key of `before`.
 * - `olderTurns`: the turn at `from`, to ask for the turns before it with; null when there is none
 *   (not their count: counting costs as much as the history).
 * `planRevisions` are those of the range's turns. The plans below are run by each engine (SQLite
 * synchronously, PostgreSQL in one REPEATABLE READ transaction), so each result is as of one `seq`.
 */

/**
 * At most this many prompts, and as many requests, still pending from before the window come
 * with a snapshot (the newest): a bound on a snapshot whatever a thread leaves unanswered; any
 * older ones are in their history pages.
 */
export const PENDING_BEFORE_MAX = 200

/** A turn's place in the timeline: its start time, then its id. */
export interface TurnKey {
  readonly at: string
  readonly id: string
}

/** Below every key (no record has an empty time). */
const THREAD_START: TurnKey = { at: "", id: "" }

export type HistoryListName = "turns" | "items" | "proposedPlans" | "prompts" | "requests"
/** The lists in the order a snapshot has them. */
export const HISTORY_LISTS: ReadonlyArray<HistoryListName> = ["turns", "items", "proposedPlans", "prompts", "requests"]

/** How an engine writes what differs: an item's JSON with its streamed chunks spliced in, an index hint. */
export interface HistoryDialect {
  /**
   * A select-list expression over items `t` giving the item's JSON, its chunks (if any) looked up
   * per item of the range: joined to all the thread's chunks instead, a range cost as much as
   * the thread's streaming items.
   */
  readonly itemJson: string
  /**
   * What follows `<table> t` to read a thread's pending records through their partial index
   * (`<table>_thread_pending`), if the engine's planner needs telling: SQLite's, without table
   * statistics, took the thread's whole (thread, time, id) index and filtered it.
   */
  readonly pendingIndex: (table: string) => string
}

const keyed = {
  turns: { table: "turns", at: "started_at", id: "turn_id" },
  items: { table: "items", at: "started_at", id: "item_id" },
  proposedPlans: { table: "proposed_plans", at: "created_at", id: "plan_id" },
  prompts: { table: "prompts", at: "created_at", id: "prompt_id" },
  requests: { table: "requests", at: "created_at", id: "request_id" }
} as const

/** A range's condition on `t`: `[@fromAt/@fromId, @toAt/@toId)`, open at the top for the window. */
const inRange = (at: string, id: string, bounded: boolean) =>
  `(t.${at}, t.${id}) >= (@fromAt, @fromId)` + (bounded ? ` and (t.${at}, t.${id}) < (@toAt, @toId)` : "")

const listSql = (dialect: HistoryDialect, name: HistoryListName, bounded: boolean) => {
  const k = keyed[name]
  const select = name === "items" ? `${dialect.itemJson} as json` : "t.json as json"
  return (
    `select ${select} from ${k.table} t where t.thread_id = @threadId and ${inRange(k.at, k.id, bounded)} ` +
    `order by t.${k.at}, t.${k.id}`
  )
}

/** The turns are found in their order's index first: joined the other way, engines scan every turn of the thread. */
const revisionsSql = (bounded: boolean) =>
  "select p.turn_id as turn_id, max(p.revision) as revision from plan_snapshots p " +
  "where p.thread_id = @threadId and p.turn_id in (select t.turn_id from turns t " +
  `where t.thread_id = @threadId and ${inRange("started_at", "turn_id", bounded)}) group by p.turn_id order by p.turn_id`

/** The newest `@most` pending records before the range (`*_thread_pending`, partial indexes), oldest first. */
const pendingBeforeSql = (dialect: HistoryDialect, name: "prompts" | "requests") => {
  const k = keyed[name]
  return (
    `select x.json as json from (select t.json as json, t.${k.at} as at, t.${k.id} as id ` +
    `from ${k.table} t ${dialect.pendingIndex(k.table)} ` +
    `where t.thread_id = @threadId and t.status = 'pending' and (t.${k.at}, t.${k.id}) < (@fromAt, @fromId) ` +
    `order by t.${k.at} desc, t.${k.id} desc limit @most) x order by x.at, x.id`
  )
}

const listsSql = (dialect: HistoryDialect, bounded: boolean) =>
  Object.fromEntries(HISTORY_LISTS.map((name) => [name, listSql(dialect, name, bounded)])) as Record<
    HistoryListName,
    string
  >

/**
 * Every statement of the window and the pages, in the SQL both engines accept (row values,
 * `limit … offset`), with named parameters (`@name`); each engine prepares them once.
 */
export const historySql = (dialect: HistoryDialect) => ({
  lastSeq: "select last_seq as seq from threads where thread_id = @threadId",
  turnKey: "select started_at as at, turn_id as id from turns where thread_id = @threadId and turn_id = @turnId",
  nthLatestTurn:
    "select started_at as at, turn_id as id from turns t where t.thread_id = @threadId " +
    "order by t.started_at desc, t.turn_id desc limit 1 offset @skip",
  nthTurnBefore:
    "select started_at as at, turn_id as id from turns t where t.thread_id = @threadId " +
    "and (t.started_at, t.turn_id) < (@toAt, @toId) order by t.started_at desc, t.turn_id desc limit 1 offset @skip",
  turnBefore:
    "select t.turn_id as id from turns t where t.thread_id = @threadId " +
    "and (t.started_at, t.turn_id) < (@fromAt, @fromId) limit 1",
  windowLists: listsSql(dialect, false),
  pageLists: listsSql(dialect, true),
  windowRevisions: revisionsSql(false),
  pageRevisions: revisionsSql(true),
  pendingPromptsBefore: pendingBeforeSql(dialect, "prompts"),
  pendingRequestsBefore: pendingBeforeSql(dialect, "requests")
})
export type HistorySql = ReturnType<typeof historySql>

/** One statement to run: where it is in `HistorySql`, and its parameters. */
export interface HistoryQuery {
  readonly sql: string
  readonly params: Readonly<Record<string, string | number>>
}

/** A plan: yields the statements it needs, one at a time, and gets each one's rows back. */
export type HistoryPlan<A> = Generator<HistoryQuery, A, ReadonlyArray<Record<string, unknown>>>

/** A range's lists, each its rows' JSON in order, and its turns' checklist revisions. */
export interface HistoryRange {
  readonly lists: Readonly<Record<HistoryListName, ReadonlyArray<string>>>
  readonly planRevisions: Readonly<Record<string, number>>
  readonly olderTurns: OlderTurns | null
}

const keyOf = (rows: ReadonlyArray<Record<string, unknown>>): TurnKey | undefined =>
  rows[0] === undefined ? undefined : { at: String(rows[0].at), id: String(rows[0].id) }

function* rangePlan(
  q: HistorySql,
  threadId: string,
  from: TurnKey | undefined,
  to: TurnKey | undefined
): HistoryPlan<HistoryRange> {
  const upper = to === undefined ? {} : { toAt: to.at, toId: to.id }
  let olderTurns: OlderTurns | null = null
  if (from !== undefined) {
    const [row] = yield { sql: q.turnBefore, params: { threadId, fromAt: from.at, fromId: from.id } }
    if (row !== undefined) olderTurns = { before: from.id as OlderTurns["before"] }
  }
  // With no turn before `from`, the range starts at the thread's start: what came before its
  // first turn (a prompt, a request) is in it, as no page will come after it.
  const start = olderTurns === null ? THREAD_START : from!
  const bounds = { threadId, fromAt: start.at, fromId: start.id, ...upper }
  const statements = to === undefined ? q.windowLists : q.pageLists
  const lists: Record<HistoryListName, ReadonlyArray<string>> = {
    turns: [],
    items: [],
    proposedPlans: [],
    prompts: [],
    requests: []
  }
  for (const name of HISTORY_LISTS) {
    const rows = yield { sql: statements[name], params: bounds }
    lists[name] = rows.map((row) => String(row.json))
  }
  const revisions = yield { sql: to === undefined ? q.windowRevisions : q.pageRevisions, params: bounds }
  const planRevisions = Object.fromEntries(revisions.map((r) => [String(r.turn_id), Number(r.revision ?? 0)]))
  return { lists, planRevisions, olderTurns }
}

/** The window of the latest `turns` turns, with the prompts and requests still pending from before it. */
export function* windowPlan(q: HistorySql, threadId: string, turns: number): HistoryPlan<HistoryRange> {
  const from = keyOf(yield { sql: q.nthLatestTurn, params: { threadId, skip: turns - 1 } })
  const range = yield* rangePlan(q, threadId, from, undefined)
  // A window that starts at the thread's start holds everything: nothing is pending before it.
  if (from === undefined || range.olderTurns === null) return range
  const before = { threadId, fromAt: from.at, fromId: from.id, most: PENDING_BEFORE_MAX }
  const prompts = (yield { sql: q.pendingPromptsBefore, params: before }).map((row) => String(row.json))
  const requests = (yield { sql: q.pendingRequestsBefore, params: before }).map((row) => String(row.json))
  return {
    ...range,
    lists: {
      ...range.lists,
      prompts: [...prompts, ...range.lists.prompts],
      requests: [...requests, ...range.lists.requests]
    }
  }
}

/** Why a page could not be read. */
export type PageRefusal = "unknown_thread" | "invalid_cursor"

/** The page of `limit` turns before the turn `before`, as of the thread's `seq`. */
export function* pagePlan(
  q: HistorySql,
  threadId: string,
  before: string,
  limit: number
): HistoryPlan<(HistoryRange & { readonly seq: number }) | PageRefusal> {
  const [thread] = yield { sql: q.lastSeq, params: { threadId } }
  if (thread === undefined) return "unknown_thread"
  const to = keyOf(yield { sql: q.turnKey, params: { threadId, turnId: before } })
  if (to === undefined) return "invalid_cursor"
  const from = keyOf(yield { sql: q.nthTurnBefore, params: { threadId, toAt: to.at, toId: to.id, skip: limit - 1 } })
  return { ...(yield* rangePlan(q, threadId, from, to)), seq: Number(thread.seq) }
}

/** Runs a plan whose statements answer at once (SQLite's one connection). */
export const runPlanSync = <A>(
  plan: HistoryPlan<A>,
  run: (query: HistoryQuery) => ReadonlyArray<Record<string, unknown>>
): A => {
  let step = plan.next([])
  while (!step.done) step = plan.next(run(step.value))
  return step.value
}

/** Runs a plan whose statements answer later (PostgreSQL, inside one transaction). */
export const runPlanAsync = async <A>(
  plan: HistoryPlan<A>,
  run: (query: HistoryQuery) => Promise<ReadonlyArray<Record<string, unknown>>>
): Promise<A> => {
  let step = plan.next([])
  while (!step.done) step = plan.next(await run(step.value))
  return step.value
}

/** A history page as the JSON text of `ThreadHistoryPage`, its lists joined as stored. */
export const pageJsonOf = (threadId: string, page: HistoryRange & { readonly seq: number }): string => {
  const lists = HISTORY_LISTS.map((name) => `"${name}":[${page.lists[name].join(",")}]`)
  return (
    `{"threadId":${JSON.stringify(threadId)},"seq":${page.seq},${lists.join(",")},` +
    `"planRevisions":${JSON.stringify(page.planRevisions)},"olderTurns":${JSON.stringify(page.olderTurns)}}`
  )
}
