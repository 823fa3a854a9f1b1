import { createHash } from "node:crypto"
import type { ThreadSnapshot } from "@planbridge/contracts"
import { desc, eq, sql } from "drizzle-orm"
import type pg from "pg"
import { named, snapshotQueries } from "../SnapshotQueries.ts"
import { snapshotFromRows, type SnapshotRows } from "../ThreadSnapshots.ts"
import type { PgDb } from "./PgDatabase.ts"
import { pgItemText } from "./PgItemText.ts"
import { PG_JSON_TEXT } from "../SnapshotRowJson.ts"
import {
  historySql,
  pageJsonOf,
  pagePlan,
  runPlanAsync,
  windowPlan,
  type HistoryQuery,
  type PageRefusal
} from "../ThreadHistory.ts"
import { snapshotJsonOf, type SnapshotJson } from "../ThreadSnapshotJson.ts"
import { preparePg } from "./PgStatement.ts"
import { pgStatementBuilder } from "./PgStatementBuilder.ts"
import { inTransaction } from "./PgTransaction.ts"
import { events, planSnapshots } from "./schema.ts"

/** The snapshot's statements (../ThreadSnapshots.ts) on the PostgreSQL schema, prepared once. */
const statementsOf = (db: PgDb) => {
  const { db: builder, tables } = pgStatementBuilder(db)
  const shared = snapshotQueries(builder, tables, pgItemText)
  return {
    thread: preparePg(shared.thread),
    // The revision projected last: PostgreSQL has no rowid, its event's `seq` says.
    latestPlan: preparePg(
      db
        .select({
          turnId: named(planSnapshots.turnId, "turnId"),
          revision: planSnapshots.revision,
          explanation: planSnapshots.explanation,
          steps: planSnapshots.steps,
          source: planSnapshots.source
        })
        .from(planSnapshots)
        .innerJoin(events, eq(events.eventId, planSnapshots.eventId))
        .where(eq(planSnapshots.threadId, sql.placeholder("threadId")))
        .orderBy(desc(events.seq))
        .limit(1)
    ),
    revisions: preparePg(shared.revisions),
    turns: preparePg(shared.turns),
    items: preparePg(shared.items),
    proposedPlans: preparePg(shared.proposedPlans),
    prompts: preparePg(shared.prompts),
    requests: preparePg(shared.requests)
  }
}
const statementsByDb = new WeakMap<PgDb, ReturnType<typeof statementsOf>>()
const statementsFor = (db: PgDb) => statementsByDb.get(db) ?? statementsByDb.set(db, statementsOf(db)).get(db)!

/**
 * The thread's snapshot, every table read in one REPEATABLE READ transaction: all of them see
 * the same commit, so the snapshot is consistent with its `seq` although other writers go on.
 */
export const readPgThreadSnapshot = (pool: pg.Pool, db: PgDb, threadId: string): Promise<ThreadSnapshot | undefined> =>
  inTransaction(
    pool,
    async (client) => {
      const s = statementsFor(db)
      const by = { threadId }
      const [thread] = await s.thread.rows<SnapshotRows["thread"]>(client, by)
      if (thread === undefined) return undefined
      const [latestPlan] = await s.latestPlan.rows<NonNullable<SnapshotRows["latestPlan"]>>(client, by)
      return snapshotFromRows({
        thread,
        latestPlan,
        revisions: await s.revisions.rows<SnapshotRows["revisions"][number]>(client, by),
        turns: await s.turns.rows<SnapshotRows["turns"][number]>(client, by),
        items: await s.items.rows<SnapshotRows["items"][number]>(client, by),
        proposedPlans: await s.proposedPlans.rows<SnapshotRows["proposedPlans"][number]>(client, by),
        prompts: await s.prompts.rows<SnapshotRows["prompts"][number]>(client, by),
        requests: await s.requests.rows<SnapshotRows["requests"][number]>(client, by)
      })
    },
    { isolation: "repeatable read", readOnly: true }
  )

/**
 * The history statements (../ThreadHistory.ts) in PostgreSQL's dialect: an item's chunks
 * spliced into its stored JSON before the closing `"}` (../ThreadSnapshotJson.ts does the same on SQLite).
 */
const rest =
  "(select string_agg(c.text, '' order by c.first_seq) from item_text_chunks c " +
  "where c.thread_id = t.thread_id and c.turn_id = t.turn_id and c.item_id = t.item_id)"
const PG_HISTORY = historySql({
  itemJson: `case when ${rest} is null then t.json else left(t.json, -2) || substr(${PG_JSON_TEXT}(${rest}), 2) || '}' end`,
  pendingIndex: () => ""
})

/** A history statement with its `@name` parameters numbered, as a named server-side prepared statement. */
const pgStatements = new Map<string, { name: string; text: string; order: ReadonlyArray<string> }>()
const pgStatementOf = (sqlText: string) => {
  let statement = pgStatements.get(sqlText)
  if (statement === undefined) {
    const order: Array<string> = []
    const text = sqlText.replace(/@([A-Za-z]+)/g, (_, name: string) => {
      const at = order.indexOf(name)
      return `$${at === -1 ? order.push(name) : at + 1}`
    })
    statement = { name: `pb_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`, text, order }
    pgStatements.set(sqlText, statement)
  }
  return statement
}
const runOn = (client: pg.PoolClient) => async (query: HistoryQuery) => {
  const statement = pgStatementOf(query.sql)
  const values = statement.order.map((name) => query.params[name])
  return (await client.query({ name: statement.name, text: statement.text, values })).rows as Array<
    Record<string, unknown>
  >
}

/**
 * The thread's snapshot with its latest `turns` turns as the JSON text clients receive
 * (../ThreadSnapshotJson.ts), in one REPEATABLE READ transaction: the head rows serialized, the
 * window's lists joined from stored JSON.
 */
export const readPgThreadSnapshotJson = (
  pool: pg.Pool,
  db: PgDb,
  threadId: string,
  turns: number
): Promise<SnapshotJson | undefined> =>
  inTransaction(
    pool,
    async (client) => {
      const s = statementsFor(db)
      const by = { threadId }
      const [thread] = await s.thread.rows<SnapshotRows["thread"]>(client, by)
      if (thread === undefined) return undefined
      const [latestPlan] = await s.latestPlan.rows<NonNullable<SnapshotRows["latestPlan"]>>(client, by)
      const window = await runPlanAsync(windowPlan(PG_HISTORY, threadId, turns), runOn(client))
      return snapshotJsonOf({ thread, latestPlan }, window)
    },
    { isolation: "repeatable read", readOnly: true }
  )

/** The page of `limit` turns before the turn `before` as JSON, or why not, in one REPEATABLE READ transaction. */
export const readPgThreadHistoryJson = (
  pool: pg.Pool,
  threadId: string,
  before: string,
  limit: number
): Promise<SnapshotJson | PageRefusal> =>
  inTransaction(
    pool,
    async (client) => {
      const page = await runPlanAsync(pagePlan(PG_HISTORY, threadId, before, limit), runOn(client))
      return typeof page === "string" ? page : { seq: page.seq, json: pageJsonOf(threadId, page) }
    },
    { isolation: "repeatable read", readOnly: true }
  )
