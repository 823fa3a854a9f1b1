import BetterSqlite3 from "better-sqlite3"
import { Deferred, Effect, Layer } from "effect"
import { existsSync, statSync } from "node:fs"
import { afterEach, describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { Database, type DatabaseOptions } from "../../src/persistence/Database.ts"
import { sqliteStoreServices } from "../../src/persistence/SqliteStore.ts"
import { makeWalCheckpointer } from "../../src/persistence/WalCheckpointer.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { tempDir } from "../support/ingestionRuntime.ts"

const cleanups: Array<() => void> = []
afterEach(() => cleanups.splice(0).forEach((f) => f()))
const newDir = () => {
  const t = tempDir("wal-checkpointer")
  cleanups.push(t.cleanup)
  return t.dir
}

const run = <A, E>(options: DatabaseOptions, effect: Effect.Effect<A, E, RuntimeIngestion | Database>) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.provide(
        effect,
        RuntimeIngestion.layer.pipe(
          Layer.provideMerge(sqliteStoreServices),
          Layer.provideMerge(Database.layer(options))
        )
      )
    )
  )

describe("WalCheckpointer", () => {
  it("checkpoints the WAL on a thread of its own once it is due, and stops before the database closes", async () => {
    const filename = `${newDir()}/planbridge.db`
    const events = generateEventMix({ seed: 31, count: 3000, threads: 8 })
    const { checkpoint, backstop, sizeBefore, checkpointer } = await run(
      { filename, walCheckpointer: { startAtFrames: 0, intervalMs: 1 } },
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        const { sqlite, walCheckpointer } = yield* Database
        const sizeBefore = statSync(filename).size
        expect(walCheckpointer.running()).toBe(false)
        yield* ingestion.ingestAll(events.slice(0, 500))
        expect(walCheckpointer.running()).toBe(true)
        const next = walCheckpointer.checkpointed()
        for (let i = 500; i < events.length; i += 500) yield* ingestion.ingestAll(events.slice(i, i + 500))
        const checkpoint = yield* Effect.promise(() => next)
        const backstop = sqlite.pragma("wal_autocheckpoint", { simple: true })
        return { checkpoint, backstop, sizeBefore, checkpointer: walCheckpointer }
      })
    )
    // The worker's connection copied committed pages into the database file; the committing
    // connection only checkpoints past its backstop.
    expect(checkpoint.checkpointed).toBeGreaterThan(0)
    expect(checkpoint.log).toBeGreaterThanOrEqual(checkpoint.checkpointed)
    expect(backstop).toBe(4000)
    expect(statSync(filename).size).toBeGreaterThan(sizeBefore)
    // Stopped before the database closed: the last connection removed the WAL on closing.
    expect(checkpointer.running()).toBe(false)
    expect(existsSync(`${filename}-wal`)).toBe(false)
    const reopened = new BetterSqlite3(filename, { readonly: true })
    const count = reopened.prepare("select count(*) as n from events").get() as { n: number }
    reopened.close()
    expect(count.n).toBe(events.length)
  })

  it("is not started for a small database: SQLite's own auto-checkpoint is left as it is", async () => {
    const filename = `${newDir()}/planbridge.db`
    const { running, autocheckpoint } = await run(
      { filename },
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        const { sqlite, walCheckpointer } = yield* Database
        yield* ingestion.ingestAll(generateEventMix({ seed: 32, count: 100 }))
        return {
          running: walCheckpointer.running(),
          autocheckpoint: sqlite.pragma("wal_autocheckpoint", { simple: true })
        }
      })
    )
    expect(running).toBe(false)
    expect(autocheckpoint).toBe(1000)
  })

  it("a checkpointer that fails says so and gives checkpoints back to the committing connection", async () => {
    const dir = newDir()
    const sqlite = new BetterSqlite3(`${dir}/planbridge.db`)
    cleanups.push(() => sqlite.close())
    sqlite.pragma("journal_mode = WAL")
    const warned = Effect.runSync(Deferred.make<string>())
    // Its own connection cannot open this file (no such directory), as a worker that fails at any point.
    const checkpointer = makeWalCheckpointer(
      sqlite,
      `${dir}/missing/planbridge.db`,
      { startAtFrames: 0, intervalMs: 1 },
      (message) => Effect.runSync(Deferred.succeed(warned, message))
    )
    checkpointer.committed()
    expect(sqlite.pragma("wal_autocheckpoint", { simple: true })).toBe(4000)
    const message = await Effect.runPromise(Deferred.await(warned))
    expect(message).toContain("WAL checkpoints are back on the committing connection")
    expect(message).toContain("directory does not exist")
    expect(sqlite.pragma("wal_autocheckpoint", { simple: true })).toBe(1000)
    expect(checkpointer.running()).toBe(false)
    checkpointer.committed()
    expect(checkpointer.running()).toBe(false)
    await checkpointer.stop()
  })
})
