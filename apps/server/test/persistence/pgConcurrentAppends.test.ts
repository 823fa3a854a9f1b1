// Appends without a cluster-wide lock (issue 32), on a real PostgreSQL 15: appends for different
// threads do not wait for each other, and appends from many threads on several stores at once
// keep every thread gap-free, lose and repeat nothing, and reach every subscriber of every store
// in each thread's order.
import type { RuntimeEvent } from "@planbridge/contracts"
import { Context, Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { EventStore } from "../../src/persistence/EventStore.ts"
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

const byThread = <A>(items: ReadonlyArray<A>, threadOf: (a: A) => string): Map<string, Array<A>> => {
  const out = new Map<string, Array<A>>()
  for (const item of items) {
    const threadId = threadOf(item)
    out.set(threadId, [...(out.get(threadId) ?? []), item])
  }
  return out
}

describe("PostgreSQL appends without a global lock", () => {
  it("an append held open on one thread does not hold up another thread's append on another store", async () => {
    const url = await postgres.createDatabase("no_global_lock")
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const [a, b] = [yield* Layer.build(pgReplica(url)), yield* Layer.build(pgReplica(url))]
          yield* holdSlowThread(url, SLOW_INSERT_MS)
          const slow = generateEventMix({ seed: 91, count: 1, threads: 1, prefix: "slow" }).map(
            (e) => ({ ...e, threadId: SLOW_THREAD }) as RuntimeEvent
          )
          const fast = generateEventMix({ seed: 92, count: 3, threads: 1, prefix: "fast" })
          const slowStarted = Date.now()
          const slowAppend = Effect.runPromise(Context.get(a, EventStore).appendBatch(slow))
          // The slow transaction is inside its insert (its locks taken) before the other starts.
          yield* Effect.sleep("300 millis")
          const fastStarted = Date.now()
          const fastResults = yield* Context.get(b, EventStore).appendBatch(fast)
          const fastMs = Date.now() - fastStarted
          const slowResults = yield* Effect.promise(() => slowAppend)
          const slowMs = Date.now() - slowStarted
          expect(fastResults.map((r) => r.threadSeq)).toEqual([1, 2, 3])
          expect(slowResults.map((r) => r.threadSeq)).toEqual([1])
          expect(slowMs).toBeGreaterThanOrEqual(SLOW_INSERT_MS - 100)
          // Under one lock for every append, the fast one waited for the slow one's commit (≥ 1.7 s).
          expect(fastMs).toBeLessThan(1_000)
          // The fast one committed while the slow one was still in its insert.
          expect(fastStarted + fastMs).toBeLessThan(slowStarted + slowMs - 500)
        })
      )
    )
  }, 60_000)

  it("many threads on three stores at once: gap-free per thread, nothing lost or repeated, every subscriber sees each thread in order", async () => {
    const url = await postgres.createDatabase("concurrent_threads")
    // Each store has threads of its own, and two threads are written by all three (a stale head, a
    // take-over's shape): 14 threads, 2,400 events, each store ingesting with 8 sessions at once.
    const own = [0, 1, 2].map((n) => generateEventMix({ seed: 100 + n, count: 600, threads: 4, prefix: `own${n}` }))
    const shared = generateEventMix({ seed: 110, count: 600, threads: 2, prefix: "shared" })
    const shares = [0, 1, 2].map((n) => [...own[n]!, ...shared.filter((_, i) => i % 3 === n)])
    const total = shares.reduce((sum, events) => sum + events.length, 0)
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const stores = [
            yield* Layer.build(pgReplica(url)),
            yield* Layer.build(pgReplica(url)),
            yield* Layer.build(pgReplica(url))
          ]
          const subscriptions = yield* Effect.forEach(stores, (c) => Context.get(c, EventStore).subscribe)
          yield* Effect.forEach(
            stores,
            (c, n) =>
              Effect.forEach(
                [...byThread(shares[n]!, (e) => e.threadId).values()],
                // Each thread (a session) ingests its events in order, one or a few at a time.
                (events) =>
                  Effect.gen(function* () {
                    for (let i = 0; i < events.length; i += 1 + (i % 3))
                      yield* Context.get(c, RuntimeIngestion).ingestAll(events.slice(i, i + 1 + (i % 3)))
                  }),
                { concurrency: "unbounded" }
              ),
            { concurrency: "unbounded" }
          )
          const received = yield* Effect.forEach(subscriptions, (s) => takeN(s, total))
          const log = yield* Context.get(stores[0]!, EventStore).readAll(0, 10_000)
          expect(log).toHaveLength(total)
          expect(new Set(log.map((s) => s.event.eventId)).size).toBe(total)
          expect(new Set(log.map((s) => s.event.eventId))).toEqual(new Set(shares.flat().map((e) => e.eventId)))
          const logByThread = byThread(log, (s) => s.event.threadId)
          expect(logByThread.size).toBe(14)
          for (const [threadId, events] of logByThread) {
            const inOrder = [...events].sort((x, y) => x.threadSeq - y.threadSeq)
            // Gap-free from 1, and each thread's `seq`s rise with its `thread_seq`.
            expect(inOrder.map((s) => s.threadSeq)).toEqual(events.map((_, i) => i + 1))
            expect(inOrder.map((s) => s.seq)).toEqual(events.map((s) => s.seq))
            // A thread's own events keep the order its sessions ingested them in (one store each).
            if (!threadId.startsWith("shared"))
              expect(inOrder.map((s) => s.event.eventId)).toEqual(
                shares.flat().flatMap((e) => (e.threadId === threadId ? [e.eventId] : []))
              )
          }
          // Every store published every event once, each thread in its order, whoever wrote it.
          for (const seen of received) {
            expect(seen).toHaveLength(total)
            const seenByThread = byThread(seen, (s) => s.event.threadId)
            for (const [threadId, events] of logByThread)
              expect(seenByThread.get(threadId)?.map((s) => [s.threadSeq, s.event.eventId])).toEqual(
                [...events].sort((x, y) => x.threadSeq - y.threadSeq).map((s) => [s.threadSeq, s.event.eventId])
              )
          }
        })
      )
    )
  }, 180_000)
})
