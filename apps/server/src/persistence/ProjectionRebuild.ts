import { asc, getTableColumns, getTableName, sql } from "drizzle-orm"
import type { SQLiteTable } from "drizzle-orm/sqlite-core"
import type { Db } from "./Database.ts"
import type { EventStore } from "./EventStore.ts"
import { itemText } from "./ItemText.ts"
import { items, itemTextChunks, planSnapshots, prompts, proposedPlans, requests, threads, turns } from "./schema.ts"

/** Children before parents, so that foreign keys hold while the projections are dropped. */
const tablesInDeleteOrder = [planSnapshots, proposedPlans, prompts, requests, itemTextChunks, items, turns, threads] as const

export type ProjectionDump = Record<string, ReadonlyArray<Record<string, unknown>>>

/** Every projection row, ordered by every column, so that two dumps compare with deep equality. */
export const dumpProjections = (db: Db): ProjectionDump => {
  const dump: ProjectionDump = {}
  for (const table of tablesInDeleteOrder) {
    // How streamed text is split into chunks depends on where batches ended: compare whole texts.
    if (table === itemTextChunks) continue
    const columns = Object.values(getTableColumns(table as SQLiteTable))
    dump[getTableName(table)] = db
      .select(table === items ? { ...getTableColumns(items), text: itemText } : getTableColumns(table as SQLiteTable))
      .from(table as SQLiteTable)
      .orderBy(...columns.map((c) => asc(c)))
      .all() as ReadonlyArray<Record<string, unknown>>
  }
  return dump
}


export interface RebuildReport {
  readonly events: number
  /** Tables whose rebuilt rows differ from what was there before. */
  readonly differences: ReadonlyArray<{ readonly table: string; readonly before: number; readonly after: number; readonly changedRows: number }>
}

const PAGE = 5_000

/**
 * Drops the projections and replays the whole event log through the projector, in one
 * transaction; reports how the result differs from what was there. With `dryRun` the
 * transaction is rolled back and nothing changes.
 */
export const rebuildProjections = (db: Db, store: EventStore, options: { readonly dryRun: boolean }): RebuildReport => {
  let report: RebuildReport | undefined
  const rollback = new Error("dry run")
  try {
    db.transaction(() => {
      const before = dumpProjections(db)
      for (const table of tablesInDeleteOrder) db.delete(table as SQLiteTable).run()
      store.projector.reset()
      let after = 0
      let count = 0
      for (;;) {
        const page = store.readAll(after, PAGE)
        if (page.length === 0) break
        for (const stored of page) store.projector.project(stored.event, stored.threadSeq)
        store.projector.finishBatch()
        after = page[page.length - 1]!.seq
        count += page.length
      }
      const rebuilt = dumpProjections(db)
      report = { events: count, differences: compareDumps(before, rebuilt) }
      if (options.dryRun) throw rollback
    })
  } catch (error) {
    if (error !== rollback) throw error
  }
  store.resetCache()
  return report!
}

const compareDumps = (before: ProjectionDump, after: ProjectionDump): RebuildReport["differences"] => {
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

/** Counts rows in the event log (for reports). */
export const countEvents = (db: Db): number => db.get<{ n: number }>(sql`select count(*) as n from events`).n
