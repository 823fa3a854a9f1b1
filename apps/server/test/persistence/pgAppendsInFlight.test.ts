// One process's appends of different threads in flight at once (issue 32), on a real PostgreSQL
// 15: an append held open on one thread does not hold up another thread's append on the same
// store, while a thread's own appends still commit and publish in the order they were called.
import type { RuntimeEvent } from "@planbridge/contracts"
import { Context, Effect, Fiber, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EventStore } from "../../src/persistence/EventStore.ts"
import { makeThreadTurns } from "../../src/persistence/postgres/PgThreadTurns.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { holdSlowThread, pgReplica, SLOW_THREAD, takeN } from "../support/pgReplicas.ts"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"

let postgres: TestPostgres
beforeAll(async () => {
  postgres = await startPostgres()
})
afterAll(() => postgres?.stop())

/** How long the trigger holds an insert into the slow thread. */
const SLOW_INSERT_MS = 2_000

const slowEvents = (seed: number, count: number) =>
  generateEventMix({ seed, count, threads: 1, prefix: `slow${seed}` }).map(
    (e) => ({ ...e, threadId: SLOW_THREAD }) as RuntimeEvent
  )

describe("PostgreSQL appends of one process", () => {
  it("an append held open on one thread does not hold up another thread's append on the same store", async () => {
    const url = await postgres.createDatabase("in_flight_same_store")
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const store = Context.get(yield* Layer.build(pgReplica(url)), EventStore)
          const subscription = yield* store.subscribe
          yield* holdSlowThread(url, SLOW_INSERT_MS)
          const slow = slowEvents(1, 1)
          const fast = generateEventMix({ seed: 2, count: 3, threads: 1, prefix: "fast" })
          const slowStarted = Date.now()
          const slowAppend = yield* Effect.forkChild(store.appendBatch(slow))
          // The slow transaction is inside its insert (its locks taken) before the other starts.
          yield* Effect.sleep("300 millis")
          const fastStarted = Date.now()
          const fastResults = yield* store.appendBatch(fast)
          const fastMs = Date.now() - fastStarted
          // Published at its own commit, before the slow thread's commit.
          const firstPublished = yield* takeN(subscription, 3, 1_000)
          const slowResults = yield* Fiber.join(slowAppend)
          const slowMs = Date.now() - slowStarted
          expect(fastResults.map((r) => r.threadSeq)).toEqual([1, 2, 3])
          expect(firstPublished.map((s) => s.event.eventId)).toEqual(fast.map((e) => e.eventId))
          expect(slowResults.map((r) => r.threadSeq)).toEqual([1])
          expect(slowMs).toBeGreaterThanOrEqual(SLOW_INSERT_MS - 100)
          // One append at a time per process: the fast one waited for the slow one's commit (≥ 1.7 s).
          expect(fastMs).toBeLessThan(1_000)
          expect(fastStarted + fastMs).toBeLessThan(slowStarted + slowMs - 500)
        })
      )
    )
  }, 60_000)

  it("a thread's second append waits for its first, and both commit and publish in call order", async () => {
    const url = await postgres.createDatabase("in_flight_one_thread")
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const store = Context.get(yield* Layer.build(pgReplica(url)), EventStore)
          const subscription = yield* store.subscribe
          yield* holdSlowThread(url, 500)
          const [first, second] = [slowEvents(3, 2), slowEvents(4, 3)]
          const firstAppend = yield* Effect.forkChild(store.appendBatch(first))
          yield* Effect.sleep("100 millis")
          const secondResults = yield* store.appendBatch(second)
          const firstResults = yield* Fiber.join(firstAppend)
          expect(firstResults.map((r) => r.threadSeq)).toEqual([1, 2])
          expect(secondResults.map((r) => r.threadSeq)).toEqual([3, 4, 5])
          const published = yield* takeN(subscription, 5, 5_000)
          expect(published.map((s) => s.threadSeq)).toEqual([1, 2, 3, 4, 5])
          expect(published.map((s) => s.event.eventId)).toEqual([...first, ...second].map((e) => e.eventId))
        })
      )
    )
  }, 60_000)
})

describe("makeThreadTurns", () => {
  it("runs effects of different threads at once and a thread's effects in call order", async () => {
    const log: Array<string> = []
    const inTurn = makeThreadTurns()
    const step = (name: string, ms: number) =>
      Effect.sync(() => log.push(`${name} start`)).pipe(
        Effect.andThen(Effect.sleep(ms)),
        Effect.andThen(Effect.sync(() => log.push(`${name} end`)))
      )
    await Effect.runPromise(
      Effect.all(
        [
          inTurn(["a"], step("a1", 300)),
          inTurn(["b"], step("b1", 10)),
          inTurn(["a", "c"], step("ac2", 10)),
          inTurn(["c"], step("c3", 10)),
          inTurn(["b"], Effect.fail("b2 refused")).pipe(Effect.ignore),
          inTurn(["b"], step("b3", 10))
        ],
        { concurrency: "unbounded" }
      )
    )
    // b1 ran while a1 did; ac2 waited for a1, c3 for ac2; b3 ran after b1 and the failed b2.
    expect(log.indexOf("b1 start")).toBeLessThan(log.indexOf("a1 end"))
    expect(log.indexOf("ac2 start")).toBeGreaterThan(log.indexOf("a1 end"))
    expect(log.indexOf("c3 start")).toBeGreaterThan(log.indexOf("ac2 end"))
    expect(log.indexOf("b3 start")).toBeGreaterThan(log.indexOf("b1 end"))
    expect(log.indexOf("b3 end")).toBeLessThan(log.indexOf("a1 end"))
  })

  it("an effect interrupted while it waits lets nothing after it overtake what came before it", async () => {
    const log: Array<string> = []
    const inTurn = makeThreadTurns()
    await Effect.runPromise(
      Effect.gen(function* () {
        const first = yield* Effect.forkChild(
          inTurn(["a"], Effect.sleep(200).pipe(Effect.andThen(Effect.sync(() => log.push("first")))))
        )
        const second = yield* Effect.forkChild(
          inTurn(
            ["a"],
            Effect.sync(() => log.push("second"))
          )
        )
        const third = yield* Effect.forkChild(
          inTurn(
            ["a"],
            Effect.sync(() => log.push("third"))
          )
        )
        yield* Effect.sleep(20)
        yield* Fiber.interrupt(second)
        yield* Fiber.join(first)
        yield* Fiber.join(third)
      })
    )
    expect(log).toEqual(["first", "third"])
  })
})
