import type { ThreadSnapshot } from "@planbridge/contracts"
import { asc, desc, eq, sql } from "drizzle-orm"
import type pg from "pg"
import { columnsOf, named, snapshotFromRows, type SnapshotRows } from "../ThreadSnapshots.ts"
import type { PgDb } from "./PgDatabase.ts"
import { pgItemText } from "./PgItemText.ts"
import { preparePg } from "./PgStatement.ts"
import { inTransaction } from "./PgTransaction.ts"
import { events, items, planSnapshots, prompts, proposedPlans, requests, threads, turns } from "./schema.ts"

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
