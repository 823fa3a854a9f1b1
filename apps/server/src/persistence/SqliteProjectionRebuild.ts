import { asc, getTableColumns, getTableName } from "drizzle-orm"
import type { SQLiteTable } from "drizzle-orm/sqlite-core"
import { Effect, Layer } from "effect"
import { Database, type Db } from "./Database.ts"
import { itemJson, itemText } from "./ItemText.ts"
import { catchUpProjections } from "./ProjectionLag.ts"
import { ProjectionRebuild, type RebuildReport } from "./ProjectionRebuild.ts"
import { SqliteEventLog } from "./SqliteEventLog.ts"
import { storeFailure } from "./StoreError.ts"
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

export type ProjectionDump = Record<string, ReadonlyArray<Record<string, unknown>>>

/** Every projection row, ordered by every column, so that two dumps compare with deep equality. */
export const dumpProjections = (db: Db): ProjectionDump => {
  catchUpProjections(db)
  const dump: ProjectionDump = {}
  for (const table of tablesInDeleteOrder) {
    // How streamed text is split into chunks depends on where batches ended: compare whole texts
    // (and the snapshot JSON with the whole text).
    if (table === itemTextChunks) continue
    const columns = getTableColumns(table as SQLiteTable)
    const selection = table === items ? { ...getTableColumns(items), text: itemText, json: itemJson } : columns
    dump[getTableName(table)] = db
      .select(selection)
      .from(table as SQLiteTable)
      .orderBy(...Object.values(columns).map((c) => asc(c)))
      .all() as ReadonlyArray<Record<string, unknown>>
  }
  return dump
}

const PAGE = 5_000

/**
 * Drops the projections and replays the whole event log through the log's projector, in one
 * transaction; reports how the result differs from what was there. With `dryRun` the
 * transaction is rolled back and nothing changes. Throws what SQLite throws.
 */
export const rebuildProjections = (
  db: Db,
  log: SqliteEventLog["Service"],
  options: { readonly dryRun: boolean }
): RebuildReport => {
  let report: RebuildReport | undefined
  const rollback = new Error("dry run")
  // What lags is projected first, so that the report compares the rebuild with every event's rows.
  log.lag.catchUp()
  try {
    db.transaction(() => {
      const before = dumpProjections(db)
      for (const table of tablesInDeleteOrder) db.delete(table as SQLiteTable).run()
      log.projector.reset()
      let after = 0
      let count = 0
      for (;;) {
        const page = log.readAll(after, PAGE)
        if (page.length === 0) break
        for (const stored of page) log.projector.project(stored.event, stored.threadSeq)
        log.projector.finishBatch()
        after = page[page.length - 1]!.seq
        count += page.length
      }
      log.lag.projectedThrough(after)
      const rebuilt = dumpProjections(db)
      report = { events: count, differences: compareDumps(before, rebuilt) }
      if (options.dryRun) throw rollback
    })
  } catch (error) {
    if (error !== rollback) throw error
  } finally {
    // Whatever happened, the cached knowledge of threads and sequences may no longer hold, and
    // what lags is what is past the watermark now.
    log.resetCache()
  }
  return report!
}

export const compareDumps = (before: ProjectionDump, after: ProjectionDump): RebuildReport["differences"] => {
  const differences: Array<RebuildReport["differences"][number]> = []
  for (const table of Object.keys(before)) {
    const a = (before[table] ?? []).map((row) => JSON.stringify(row))
    const b = new Set((after[table] ?? []).map((row) => JSON.stringify(row)))
    const changedRows = a.filter((row) => !b.has(row)).length + Math.max(0, b.size - a.length)
    if (changedRows > 0 || a.length !== b.size) {
      differences.push({ table, before: a.length, after: b.size, changedRows })
    }
  }
  return differences
}

/** `ProjectionRebuild` on SQLite, through the same event log (and cache) that appends. */
export const sqliteProjectionRebuild = Layer.effect(
  ProjectionRebuild,
  Effect.gen(function* () {
    const { db } = yield* Database
    const log = yield* SqliteEventLog
    return ProjectionRebuild.of({
      rebuild: (options) =>
        Effect.try({
          try: () => rebuildProjections(db, log, options),
          catch: storeFailure("write", "rebuild the projections")
        })
    })
  })
)
