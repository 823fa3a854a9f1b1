import type { ThreadSnapshot } from "@planbridge/contracts"
import { asc, desc, eq, sql } from "drizzle-orm"
import type pg from "pg"
import { columnsOf, named, snapshotFromRows, type SnapshotRows } from "../ThreadSnapshots.ts"
import type { PgDb } from "./PgDatabase.ts"
import { pgItemText } from "./PgItemText.ts"
import { PG_JSON_TEXT } from "../SnapshotRowJson.ts"
import { snapshotJsonOf, type SnapshotJson } from "../ThreadSnapshotJson.ts"
import { preparePg, type PgStatement } from "./PgStatement.ts"
import { inTransaction } from "./PgTransaction.ts"
import {
  events,
  items,
  itemTextChunks,
  planSnapshots,
  prompts,
  proposedPlans,
  requests,
  threads,
  turns
} from "./schema.ts"

/** The snapshot's statements (../ThreadSnapshots.ts) on the PostgreSQL schema, prepared once. */
const statementsOf = (db: PgDb) => {
  const threadId = sql.placeholder("threadId")
  return {
    thread: preparePg(db.select(columnsOf(threads)).from(threads).where(eq(threads.threadId, threadId))),
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
        .where(eq(planSnapshots.threadId, threadId))
        .orderBy(desc(events.seq))
        .limit(1)
    ),
    revisions: preparePg(
      db
        .select({
          turnId: named(planSnapshots.turnId, "turnId"),
          revision: sql<number | null>`max(${planSnapshots.revision})`.as("revision")
        })
        .from(planSnapshots)
        .where(eq(planSnapshots.threadId, threadId))
        .groupBy(planSnapshots.turnId)
        .orderBy(asc(planSnapshots.turnId))
    ),
    turns: preparePg(
      db
        .select(columnsOf(turns))
        .from(turns)
        .where(eq(turns.threadId, threadId))
        .orderBy(asc(turns.startedAt), asc(turns.turnId))
    ),
    items: preparePg(
      db
        .select({ ...columnsOf(items), text: sql<string>`${pgItemText}`.as("text") })
        .from(items)
        .where(eq(items.threadId, threadId))
        .orderBy(asc(items.startedAt), asc(items.itemId))
    ),
    proposedPlans: preparePg(
      db
        .select(columnsOf(proposedPlans))
        .from(proposedPlans)
        .where(eq(proposedPlans.threadId, threadId))
        .orderBy(asc(proposedPlans.createdAt), asc(proposedPlans.planId))
    ),
    prompts: preparePg(
      db
        .select(columnsOf(prompts))
        .from(prompts)
        .where(eq(prompts.threadId, threadId))
        .orderBy(asc(prompts.createdAt), asc(prompts.promptId))
    ),
    requests: preparePg(
      db
        .select(columnsOf(requests))
        .from(requests)
        .where(eq(requests.threadId, threadId))
        .orderBy(asc(requests.createdAt), asc(requests.requestId))
    )
  }
}

/**
 * Each list's rows as their stored snapshot JSON (../SnapshotRowJson.ts), in the snapshot's
 * order; an item still streaming gets its chunks spliced in before its JSON's closing `"}`
 * (../ThreadSnapshotJson.ts does the same on SQLite).
 */
const listStatementsOf = (db: PgDb) => {
  const threadId = sql.placeholder("threadId")
  const rests = db
    .select({
      itemId: sql<string>`${itemTextChunks.itemId}`.as("rest_item_id"),
      rest: sql<string>`string_agg(${itemTextChunks.text}, '' order by ${itemTextChunks.firstSeq})`.as("rest")
    })
    .from(itemTextChunks)
    .where(eq(itemTextChunks.threadId, threadId))
    .groupBy(itemTextChunks.itemId)
    .as("r")
  const itemJson = sql<string>`case when ${rests.rest} is null then ${items.json} else left(${items.json}, -2) || substr(${sql.raw(PG_JSON_TEXT)}(${rests.rest}), 2) || '}' end`
  return {
    turns: preparePg(
      db
        .select({ json: turns.json })
        .from(turns)
        .where(eq(turns.threadId, threadId))
        .orderBy(asc(turns.startedAt), asc(turns.turnId))
    ),
    items: preparePg(
      db
        .select({ json: itemJson.as("json") })
        .from(items)
        .leftJoin(rests, eq(rests.itemId, items.itemId))
        .where(eq(items.threadId, threadId))
        .orderBy(asc(items.startedAt), asc(items.itemId))
    ),
    proposedPlans: preparePg(
      db
        .select({ json: proposedPlans.json })
        .from(proposedPlans)
        .where(eq(proposedPlans.threadId, threadId))
        .orderBy(asc(proposedPlans.createdAt), asc(proposedPlans.planId))
    ),
    prompts: preparePg(
      db
        .select({ json: prompts.json })
        .from(prompts)
        .where(eq(prompts.threadId, threadId))
        .orderBy(asc(prompts.createdAt), asc(prompts.promptId))
    ),
    requests: preparePg(
      db
        .select({ json: requests.json })
        .from(requests)
        .where(eq(requests.threadId, threadId))
        .orderBy(asc(requests.createdAt), asc(requests.requestId))
    )
  }
}
const listStatementsByDb = new WeakMap<PgDb, ReturnType<typeof listStatementsOf>>()
const listStatementsFor = (db: PgDb) =>
  listStatementsByDb.get(db) ?? listStatementsByDb.set(db, listStatementsOf(db)).get(db)!

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
 * The thread's snapshot as the JSON text clients receive (../ThreadSnapshotJson.ts), in one
 * REPEATABLE READ transaction: the head rows serialized, the lists joined from stored JSON.
 */
export const readPgThreadSnapshotJson = (
  pool: pg.Pool,
  db: PgDb,
  threadId: string
): Promise<SnapshotJson | undefined> =>
  inTransaction(
    pool,
    async (client) => {
      const s = statementsFor(db)
      const by = { threadId }
      const [thread] = await s.thread.rows<SnapshotRows["thread"]>(client, by)
      if (thread === undefined) return undefined
      const [latestPlan] = await s.latestPlan.rows<NonNullable<SnapshotRows["latestPlan"]>>(client, by)
      const revisions = await s.revisions.rows<SnapshotRows["revisions"][number]>(client, by)
      const l = listStatementsFor(db)
      const list = async (statement: PgStatement) =>
        (await statement.rows<{ json: string }>(client, by)).map((row) => row.json)
      return snapshotJsonOf(
        { thread, latestPlan, revisions },
        {
          turns: await list(l.turns),
          items: await list(l.items),
          proposedPlans: await list(l.proposedPlans),
          prompts: await list(l.prompts),
          requests: await list(l.requests)
        }
      )
    },
    { isolation: "repeatable read", readOnly: true }
  )
