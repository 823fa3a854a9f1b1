import BetterSqlite3 from "better-sqlite3"
import { drizzle } from "drizzle-orm/better-sqlite3"
import { migrate } from "drizzle-orm/better-sqlite3/migrator"
import type { ThreadId } from "@planbridge/contracts"
import { Effect } from "effect"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { MIGRATIONS_FOLDER } from "../../src/persistence/Database.ts"
import { ThreadReads } from "../../src/persistence/ThreadReads.ts"
import { runWithIngestion, tempDir } from "../support/ingestionRuntime.ts"
import { migrationsUpTo } from "../support/migrationsUpTo.ts"

/**
 * Migration 0011 (issue 32): the (thread, turn) index of proposed plans, which no query read but
 * every projected plan row was written into, is dropped. A database the previous release left
 * opens, keeps its plans, and a thread's plans are still read by an index range, in order.
 */

const THREAD = "thr-plans"
const cleanups: Array<() => void> = []
afterAll(() => cleanups.forEach((cleanup) => cleanup()))

const indexesOf = (sqlite: BetterSqlite3.Database, table: string): Array<string> =>
  (
    sqlite
      .prepare("select name from sqlite_schema where type = 'index' and tbl_name = ? and sql is not null order by name")
      .all(table) as Array<{ name: string }>
  ).map((row) => row.name)

describe("migration 0011: proposed plans without their unused (thread, turn) index", () => {
  it("opens a database left at 0010 with its plans, and reads them by the (thread, created) range", async () => {
    const t = tempDir("plan-index-migration")
    cleanups.push(t.cleanup)
    const file = join(t.dir, "planbridge.db")
    const sqlite = new BetterSqlite3(file)
    migrate(drizzle({ client: sqlite }), {
      migrationsFolder: migrationsUpTo(MIGRATIONS_FOLDER, "0010_projection_watermark", join(t.dir, "old"))
    })
    expect(indexesOf(sqlite, "proposed_plans")).toEqual(["proposed_plans_thread", "proposed_plans_thread_created"])
    sqlite
      .prepare(
        "insert into threads (thread_id, provider, state, flags, last_seq, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?)"
      )
      .run(THREAD, "codex", "idle", "[]", 0, "2026-06-01T09:00:00.000Z", "2026-06-01T09:00:09.000Z")
    const plan = sqlite.prepare(
      "insert into proposed_plans (plan_id, thread_id, turn_id, status, streamed_text, markdown, created_at, updated_at) " +
        "values (?, ?, ?, 'approved', ?, ?, ?, ?)"
    )
    plan.run("plan-b", THREAD, "turn-2", "B", "# B", "2026-06-01T09:00:05.000Z", "2026-06-01T09:00:06.000Z")
    plan.run("plan-a", THREAD, "turn-1", "A", "# A", "2026-06-01T09:00:01.000Z", "2026-06-01T09:00:02.000Z")
    sqlite.close()

    const snapshot = await runWithIngestion(
      file,
      Effect.gen(function* () {
        return yield* (yield* ThreadReads).snapshot(THREAD as ThreadId)
      })
    )
    expect(snapshot?.proposedPlans.map((p) => [p.planId, p.turnId, p.markdown])).toEqual([
      ["plan-a", "turn-1", "# A"],
      ["plan-b", "turn-2", "# B"]
    ])

    const check = new BetterSqlite3(file, { readonly: true })
    try {
      expect(indexesOf(check, "proposed_plans")).toEqual(["proposed_plans_thread_created"])
      // The snapshot's and the history's read: a range of the remaining index, no sort of its own.
      const plan = check
        .prepare("explain query plan select * from proposed_plans where thread_id = ? order by created_at, plan_id")
        .all(THREAD) as Array<{ detail: string }>
      expect(plan.map((step) => step.detail)).toEqual([
        "SEARCH proposed_plans USING INDEX proposed_plans_thread_created (thread_id=?)"
      ])
    } finally {
      check.close()
    }
  })
})
