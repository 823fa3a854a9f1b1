// Ingestion pipelines its PostgreSQL appends (issue 32): while one batch waits for its commit, the
// writer commits the next one, up to the store's bound, on a real PostgreSQL 15. A thread's jobs
// still commit, publish and settle in the order they were offered, also when an earlier one's
// append failed and is tried again.
import type { RuntimeEvent } from "@planbridge/contracts"
import { Context, Effect, Fiber, Layer } from "effect"
import type pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { APPENDS_IN_FLIGHT } from "../../src/persistence/postgres/PgEventStore.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { holdInserts, holdSlowThread, pgReplica, SLOW_THREAD, takeN } from "../support/pgReplicas.ts"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"

let postgres: TestPostgres
beforeAll(async () => {
  postgres = await startPostgres()
})
afterAll(() => postgres?.stop())

const eventsOf = (threadId: string, seed: number, count: number) =>
  generateEventMix({ seed, count, threads: 1, prefix: `${threadId}-${seed}` }).map(
    (e) => ({ ...e, threadId }) as RuntimeEvent
  )

/** Append transactions of the database sleeping in the slow insert trigger right now. */
const sleepingAppends = (admin: pg.Client) =>
  Effect.promise(
    async () =>
      (await admin.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where wait_event = 'PgSleep'`))
        .rows[0]!.n
  )

describe("ingestion's pipelined PostgreSQL appends", () => {
  it("another thread's job commits while a slow thread's append waits for its commit", async () => {
    const url = await postgres.createDatabase("pipelined_two_threads")
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const ingestion = Context.get(yield* Layer.build(pgReplica(url)), RuntimeIngestion)
          const admin = yield* holdSlowThread(url, 2_000)
          const slowStarted = Date.now()
          const slow = yield* Effect.forkChild(ingestion.ingestAll(eventsOf(SLOW_THREAD, 1, 1)))
          // The slow append is inside its insert before the other job is offered.
          yield* Effect.sleep("300 millis")
          const fastStarted = Date.now()
          const fast = yield* ingestion.ingestAll(eventsOf("fast-thread", 2, 3))
          const fastMs = Date.now() - fastStarted
          // Seen on the server: the slow append's transaction is still open after the fast one committed.
          expect(yield* sleepingAppends(admin)).toBe(1)
          const slowReceipts = yield* Fiber.join(slow)
          const slowMs = Date.now() - slowStarted
          expect(fast.map((r) => r.threadSeq)).toEqual([1, 2, 3])
          expect(slowReceipts.map((r) => r.threadSeq)).toEqual([1])
          expect(slowMs).toBeGreaterThanOrEqual(1_900)
          // One batch at a time, the fast job would wait for the slow commit (≥ 1.7 s).
          expect(fastMs).toBeLessThan(1_000)
        })
      )
    )
  }, 60_000)

  it("a thread's later job waits for its earlier one held through a lost connection: order kept", async () => {
    const url = await postgres.createDatabase("pipelined_order_after_loss")
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const ingestion = Context.get(yield* Layer.build(pgReplica(url)), RuntimeIngestion)
          const subscription = yield* ingestion.subscribe
          const admin = yield* holdSlowThread(url, 1_000)
          const [first, second] = [eventsOf(SLOW_THREAD, 3, 2), eventsOf(SLOW_THREAD, 4, 3)]
          const firstIngest = yield* Effect.forkChild(ingestion.ingestAll(first))
          yield* Effect.sleep("300 millis")
          const secondIngest = yield* Effect.forkChild(ingestion.ingestAll(second))
          yield* Effect.sleep("100 millis")
          // The first append's connection is lost inside its insert: ingestion holds the job and
          // tries it again; the second job must not be committed before it.
          const terminated = yield* Effect.promise(() =>
            admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where wait_event = 'PgSleep'`)
          )
          expect(terminated.rowCount).toBe(1)
          const firstReceipts = yield* Fiber.join(firstIngest)
          const secondReceipts = yield* Fiber.join(secondIngest)
          expect(firstReceipts.map((r) => r.threadSeq)).toEqual([1, 2])
          expect(secondReceipts.map((r) => r.threadSeq)).toEqual([3, 4, 5])
          const published = yield* takeN(subscription, 5, 10_000)
          expect(published.map((s) => s.event.eventId)).toEqual([...first, ...second].map((e) => e.eventId))
          const stored = yield* Effect.promise(() =>
            admin.query<{ event_id: string }>(`select event_id from events order by thread_seq`)
          )
          expect(stored.rows.map((r) => r.event_id)).toEqual([...first, ...second].map((e) => e.eventId))
        })
      )
    )
  }, 60_000)

  it(`at most ${APPENDS_IN_FLIGHT} appends are in flight at once; the jobs past them wait, none is lost`, async () => {
    const url = await postgres.createDatabase("pipelined_bound")
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const ingestion = Context.get(yield* Layer.build(pgReplica(url)), RuntimeIngestion)
          // Every thread's inserts held 600 ms, each job offered on its own while the others wait.
          const admin = yield* holdInserts(url, 600, "held-%")
          const threads = Array.from({ length: APPENDS_IN_FLIGHT + 3 }, (_, i) => `held-${i}`)
          const ingests = yield* Effect.forkChild(
            Effect.forEach(
              threads,
              (threadId, i) =>
                Effect.andThen(Effect.sleep(`${i * 20} millis`), ingestion.ingestAll(eventsOf(threadId, i, 1))),
              { concurrency: "unbounded" }
            )
          )
          let most = 0
          for (let i = 0; i < 20; i++) {
            yield* Effect.sleep("50 millis")
            most = Math.max(most, yield* sleepingAppends(admin))
          }
          const receipts = yield* Fiber.join(ingests)
          expect(most).toBe(APPENDS_IN_FLIGHT)
          expect(receipts.map((r) => r.map((x) => x.threadSeq))).toEqual(threads.map(() => [1]))
        })
      )
    )
  }, 60_000)
})
