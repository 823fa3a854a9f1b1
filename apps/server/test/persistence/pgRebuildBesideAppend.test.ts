// A projection rebuild and an append of the same process at once (issue 32): the append folds its
// batch before its script waits for the rebuild's lock, so the rebuild must not replay on the
// projector that fold used. Held deterministically: the log's rows are locked until the rebuild
// is waiting to read them (its projections already dropped) and the append is waiting for the
// append lock (its batch folded); then both go on. Afterwards every projection row is what a
// replay of the log makes, and the thread's row is there.
import { Context, Effect, Fiber, Layer } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { ProjectionRebuild } from "../../src/persistence/ProjectionRebuild.ts"
import { pgReplica } from "../support/pgReplicas.ts"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"
import { deltaEvent as delta } from "../support/deltaEvent.ts"

let postgres: TestPostgres
beforeAll(async () => {
  postgres = await startPostgres()
})
afterAll(() => postgres?.stop())

/** Polls until some backend other than the admin's waits on a lock, its query starting with `prefix`. */
const waitForLockWait = (admin: pg.Client, prefix: string) =>
  Effect.promise(async () => {
    for (let i = 0; i < 1_000; i++) {
      const { rows } = await admin.query<{ waiting: number }>(
        `select count(*)::int as waiting from pg_stat_activity
         where pid <> pg_backend_pid() and wait_event_type = 'Lock' and query like $1`,
        [`${prefix}%`]
      )
      if (rows[0]!.waiting > 0) return
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    throw new Error(`nothing waited on a lock running ${prefix}`)
  })

describe("a PostgreSQL projection rebuild beside an append of the same process", () => {
  it("rebuilds every row (the thread's included) and the append goes in after it", async () => {
    const url = await postgres.createDatabase("rebuild_beside_append")
    const admin = new pg.Client({ connectionString: url })
    admin.on("error", () => undefined)
    await admin.connect()
    try {
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const store = yield* Layer.build(pgReplica(url))
            const ingestion = Context.get(store, RuntimeIngestion)
            const { rebuild } = Context.get(store, ProjectionRebuild)
            // Two commits: the second one's thread head is known, as the append below assumes it.
            yield* ingestion.ingestAll([delta("x"), delta("x")])
            yield* ingestion.ingestAll([delta("x")])

            const locker = new pg.Client({ connectionString: url })
            locker.on("error", () => undefined)
            yield* Effect.promise(() => locker.connect())
            yield* Effect.promise(() => locker.query("begin; lock table events in access exclusive mode"))
            const rebuilding = yield* Effect.forkScoped(rebuild({ dryRun: false }))
            yield* waitForLockWait(admin, "select seq")
            const appending = yield* Effect.forkScoped(ingestion.ingestAll([delta("x")]))
            yield* waitForLockWait(admin, "begin")
            yield* Effect.promise(async () => {
              await locker.query("commit")
              await locker.end()
            })

            const report = yield* Fiber.join(rebuilding)
            expect(report.events).toBe(3)
            const [receipt] = yield* Fiber.join(appending)
            expect(receipt!.threadSeq).toBe(4)
            const { rows } = yield* Effect.promise(() =>
              admin.query<{ last: number }>("select last_seq as last from threads where thread_id = 'x'")
            )
            expect(rows).toEqual([{ last: 4 }])
            const again = yield* rebuild({ dryRun: true })
            expect(again).toEqual({ events: 4, differences: [] })
          })
        )
      )
    } finally {
      await admin.end()
    }
  })
})
