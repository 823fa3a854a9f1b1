import { asc, getTableColumns, getTableName } from "drizzle-orm"
import { drizzle } from "drizzle-orm/node-postgres"
import type { PgTable } from "drizzle-orm/pg-core"
import { Effect, Layer } from "effect"
import type pg from "pg"
import { ProjectionRebuild, type RebuildReport } from "../ProjectionRebuild.ts"
import { compareDumps, type ProjectionDump } from "../SqliteProjectionRebuild.ts"
import { storeFailure } from "../StoreError.ts"
import { PgDatabase, type PgDb } from "./PgDatabase.ts"
import { APPEND_LOCK, PgEventLog } from "./PgEventLog.ts"
import { pgItemJson, pgItemText } from "./PgItemText.ts"
import { makeProjectorOn } from "../Projector.ts"
import { preparePgProjectionStatements } from "./PgProjectionStatements.ts"
import { loadProjectionReads, makePgProjectionSink } from "./PgProjectionSink.ts"
import { inTransaction } from "./PgTransaction.ts"
import * as schema from "./schema.ts"
import { items, itemTextChunks, planSnapshots, prompts, proposedPlans, requests, threads, turns } from "./schema.ts"

/** Children before parents, so that foreign keys hold while the projections are dropped. */
const tablesInDeleteOrder = [
  planSnapshots,
  proposedPlans,
  prompts,
  requests,
  itemTextChunks,
  items,
  turns,
  threads
] as const

/** Every projection row, ordered by every column (SqliteProjectionRebuild.ts's dump, on PostgreSQL). */
const dumpProjections = async (db: PgDb): Promise<ProjectionDump> => {
  const dump: Record<string, ReadonlyArray<Record<string, unknown>>> = {}
  for (const table of tablesInDeleteOrder) {
    if (table === itemTextChunks) continue
    const columns = getTableColumns(table as PgTable)
    const selection = table === items ? { ...getTableColumns(items), text: pgItemText, json: pgItemJson } : columns
    dump[getTableName(table)] = (await db
      .select(selection)
      .from(table as PgTable)
      .orderBy(...Object.values(columns).map((c) => asc(c)))) as ReadonlyArray<Record<string, unknown>>
  }
  return dump
}

/** The dump through a connection or pool of the database (tests compare dumps of one engine). */
export const dumpPgProjections = (on: pg.Pool | pg.PoolClient): Promise<ProjectionDump> =>
  dumpProjections(drizzle({ client: on, schema }))

const PAGE = 5_000

/**
 * `ProjectionRebuild` on PostgreSQL: the same replay as SQLite's, in one transaction under the append
 * lock, with a projector and sink of its own. Not the event log's: the replay awaits between its
 * pages, and an append of this process folds its batch on the log's projector before its script
 * waits for the lock; on a shared projector that fold would teach the replay that a thread's row
 * exists before the replay made it (`pgRebuildBesideAppend.test.ts`). The log's projector forgets
 * what it knew once the rows were rewritten.
 */
export const pgProjectionRebuild = Layer.effect(
  ProjectionRebuild,
  Effect.gen(function* () {
    const { pool, db } = yield* PgDatabase
    const log = yield* PgEventLog
    const statements = preparePgProjectionStatements(db)
    const rollback = new Error("dry run")

    const rebuild = async (options: { readonly dryRun: boolean }): Promise<RebuildReport> => {
      const sink = makePgProjectionSink(statements)
      const projector = makeProjectorOn(sink.statements)
      let report: RebuildReport | undefined
      try {
        await inTransaction(pool, async (client) => {
          await client.query("select pg_advisory_xact_lock($1)", [APPEND_LOCK])
          // The dumps read through drizzle on this transaction's connection.
          const onClient: PgDb = drizzle({ client, schema })
          const before = await dumpProjections(onClient)
          for (const table of tablesInDeleteOrder) await client.query(`delete from "${getTableName(table)}"`)
          let after = 0
          let count = 0
          for (;;) {
            const page = await log.readAll(after, PAGE, client)
            if (page.length === 0) break
            sink.load(
              await loadProjectionReads(
                client,
                page.map((stored) => stored.event)
              )
            )
            for (const stored of page) projector.project(stored.event, stored.threadSeq)
            projector.finishBatch()
            await sink.drain(client)
            after = page[page.length - 1]!.seq
            count += page.length
          }
          report = { events: count, differences: compareDumps(before, await dumpProjections(onClient)) }
          if (options.dryRun) throw rollback
        })
      } catch (error) {
        if (error !== rollback) throw error
      } finally {
        log.projector.reset()
      }
      return report!
    }
    return ProjectionRebuild.of({
      rebuild: (options) =>
        Effect.tryPromise({ try: () => rebuild(options), catch: storeFailure("write", "rebuild the projections") })
    })
  })
)
