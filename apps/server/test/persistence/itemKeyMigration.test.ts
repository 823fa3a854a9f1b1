import BetterSqlite3 from "better-sqlite3"
import { drizzle as sqliteDrizzle } from "drizzle-orm/better-sqlite3"
import { migrate as sqliteMigrate } from "drizzle-orm/better-sqlite3/migrator"
import { drizzle as pgDrizzle } from "drizzle-orm/node-postgres"
import { migrate as pgMigrate } from "drizzle-orm/node-postgres/migrator"
import type { ThreadId, ThreadSnapshot } from "@planbridge/contracts"
import { Effect, Layer } from "effect"
import { join } from "node:path"
import pg from "pg"
import { afterAll, describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { MIGRATIONS_FOLDER } from "../../src/persistence/Database.ts"
import { postgresStore } from "../../src/persistence/postgres/PgStore.ts"
import { ThreadReads } from "../../src/persistence/ThreadReads.ts"
import { runWithIngestion, tempDir } from "../support/ingestionRuntime.ts"
import { migrationsUpTo } from "../support/migrationsUpTo.ts"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"

/**
 * Issue 34's migration (0005, both engines): items are keyed (thread, turn, item) and their text
 * chunks carry their turn. A database the previous release left, with a completed item and one
 * still streaming (its text split into chunks), keeps every row and every text across it.
 */

const THREAD = "thr-migrated"
const LAST_OLD = "0004_snapshot_window"

/** The migrations folder as it was up to `LAST_OLD`. */
const oldMigrations = (folder: string, into: string): string => migrationsUpTo(folder, LAST_OLD, into)

/** The rows, in the old shape, with `?` placeholders. */
const OLD_ROWS: ReadonlyArray<readonly [string, ReadonlyArray<unknown>]> = [
  [
    "insert into threads (thread_id, provider, state, flags, last_seq, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?)",
    [THREAD, "codex", "idle", "[]", 9, "2026-06-01T09:00:00.000Z", "2026-06-01T09:00:09.000Z"]
  ],
  [
    "insert into turns (thread_id, turn_id, status, started_at, completed_at) values (?, ?, ?, ?, ?)",
    [THREAD, "turn-1", "completed", "2026-06-01T09:00:01.000Z", "2026-06-01T09:00:05.000Z"]
  ],
  [
    "insert into turns (thread_id, turn_id, status, started_at) values (?, ?, ?, ?)",
    [THREAD, "turn-2", "inProgress", "2026-06-01T09:00:06.000Z"]
  ],
  [
    "insert into items (thread_id, item_id, turn_id, item_type, status, text, started_at, updated_at, completed_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    [
      THREAD,
      "msg_done",
      "turn-1",
      "assistant_message",
      "completed",
      "Done.",
      "2026-06-01T09:00:02.000Z",
      "2026-06-01T09:00:04.000Z",
      "2026-06-01T09:00:04.000Z"
    ]
  ],
  [
    "insert into items (thread_id, item_id, turn_id, item_type, status, text, started_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?)",
    [
      THREAD,
      "msg_streaming",
      "turn-2",
      "assistant_message",
      "inProgress",
      "",
      "2026-06-01T09:00:07.000Z",
      "2026-06-01T09:00:09.000Z"
    ]
  ],
  [
    "insert into item_text_chunks (thread_id, item_id, first_seq, text) values (?, ?, ?, ?)",
    [THREAD, "msg_streaming", 8, "Still "]
  ],
  [
    "insert into item_text_chunks (thread_id, item_id, first_seq, text) values (?, ?, ?, ?)",
    [THREAD, "msg_streaming", 9, "going"]
  ]
]

const CHUNKS = "select turn_id, item_id, first_seq, text from item_text_chunks order by first_seq"

const expectKept = (snapshot: ThreadSnapshot | undefined, chunks: ReadonlyArray<Record<string, unknown>>) => {
  expect(snapshot?.items.map((i) => [i.turnId, i.itemId, i.status, i.text])).toEqual([
    ["turn-1", "msg_done", "completed", "Done."],
    ["turn-2", "msg_streaming", "inProgress", "Still going"]
  ])
  expect(chunks.map((c) => ({ ...c, first_seq: Number(c.first_seq) }))).toEqual([
    { turn_id: "turn-2", item_id: "msg_streaming", first_seq: 8, text: "Still " },
    { turn_id: "turn-2", item_id: "msg_streaming", first_seq: 9, text: "going" }
  ])
}

const snapshot = Effect.gen(function* () {
  return yield* (yield* ThreadReads).snapshot(THREAD as ThreadId)
})

let postgres: TestPostgres | undefined
const cleanups: Array<() => void> = []
afterAll(() => {
  postgres?.stop()
  cleanups.forEach((cleanup) => cleanup())
})

describe("migration 0005: items keyed within their turn", () => {
  it("keeps a SQLite database's items and streamed text", async () => {
    const t = tempDir("item-key-migration")
    cleanups.push(t.cleanup)
    const file = join(t.dir, "planbridge.db")
    const sqlite = new BetterSqlite3(file)
    sqliteMigrate(sqliteDrizzle({ client: sqlite }), {
      migrationsFolder: oldMigrations(MIGRATIONS_FOLDER, join(t.dir, "old"))
    })
    for (const [sql, params] of OLD_ROWS) sqlite.prepare(sql).run(...params)
    sqlite.close()

    const after = await runWithIngestion(file, snapshot)
    const check = new BetterSqlite3(file, { readonly: true })
    try {
      expectKept(after, check.prepare(CHUNKS).all() as Array<Record<string, unknown>>)
    } finally {
      check.close()
    }
  })

  it("keeps a PostgreSQL database's items and streamed text", async () => {
    postgres = await startPostgres()
    const url = await postgres.createDatabase(`item_key_${process.pid}`)
    const t = tempDir("item-key-migration-pg")
    cleanups.push(t.cleanup)
    const pool = new pg.Pool({ connectionString: url, max: 1 })
    try {
      await pgMigrate(pgDrizzle({ client: pool }), {
        migrationsFolder: oldMigrations(join(MIGRATIONS_FOLDER, "postgres"), join(t.dir, "old"))
      })
      for (const [sql, params] of OLD_ROWS) {
        let n = 0
        await pool.query(
          sql.replace(/\?/g, () => `$${++n}`),
          [...params]
        )
      }
      const layer = RuntimeIngestion.layer.pipe(Layer.provideMerge(postgresStore({ url })))
      const after = await Effect.runPromise(Effect.scoped(Effect.provide(snapshot, layer)))
      expectKept(after, (await pool.query(CHUNKS)).rows as Array<Record<string, unknown>>)
    } finally {
      await pool.end()
    }
  })
})
