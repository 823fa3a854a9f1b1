// Issue 31, item 2: a replica must not die when its PostgreSQL restarts. node-postgres reports a
// lost connection as an 'error' event on its client, and an 'error' event nobody listens to is an
// uncaught exception: the process exits. The pool listens only while a connection is idle; these
// connections are busy (checked out, or of their own) when the cluster is restarted by the test.
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PgDatabase } from "../../src/persistence/postgres/PgDatabase.ts"
import { inTransaction } from "../../src/persistence/postgres/PgTransaction.ts"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"

let postgres: TestPostgres
beforeAll(async () => {
  postgres = await startPostgres()
})
afterAll(() => postgres?.stop())

/** Errors that reached nobody: an 'error' event without a listener throws out of the socket's callback. */
const uncaught: Array<unknown> = []
const record = (error: unknown) => void uncaught.push(error)

const openDatabase = async (url: string) => {
  const scope = Effect.runSync(Scope.make())
  const database = await Effect.runPromise(Scope.provide(PgDatabase.make({ url, poolSize: 4 }), scope))
  return { database, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/** Settles to the rejection's message (or "resolved"), so that a rejection is never unhandled. */
const outcome = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => "resolved",
    (error: unknown) => (error instanceof Error ? error.message : String(error))
  )

describe.each(["immediate", "fast"] as const)("pg_ctl restart -m %s under busy connections", (mode) => {
  it("no connection's loss is an uncaught exception, their work fails, and new work runs once the cluster is back", async () => {
    const url = await postgres.createDatabase(`loss_${mode}`)
    const { database, close } = await openDatabase(url)
    process.prependListener("uncaughtException", record)
    try {
      // A transaction whose statement runs (a checked-out connection with an active query).
      const running = outcome(inTransaction(database.pool, (client) => client.query("select pg_sleep(60)")))
      // A checked-out connection between statements (idle in transaction: no query to fail).
      const between = await database.pool.connect()
      await between.query("begin")
      // A connection of its own (what LISTEN uses), busy.
      const own = await database.connect()
      const ownRunning = outcome(own.query("select pg_sleep(60)"))
      await new Promise((resolve) => setTimeout(resolve, 200))

      await postgres.restart(mode)

      expect(await running).not.toBe("resolved")
      expect(await ownRunning).not.toBe("resolved")
      between.release(true)
      await own.end().catch(() => undefined)
      // The pool connects again: new work runs on new connections.
      const rows = await inTransaction(database.pool, async (client) => (await client.query("select 1 as one")).rows)
      expect(rows).toEqual([{ one: 1 }])
      expect((await database.pool.query("select 2 as two")).rows).toEqual([{ two: 2 }])
      // Give a late 'error' or 'end' of the lost connections the chance to surface.
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect(uncaught.map(String)).toEqual([])
    } finally {
      process.removeListener("uncaughtException", record)
      await close()
    }
  }, 60_000)
})
