// Issue 31, item 3: what is ingested while PostgreSQL is away is held and committed once it is
// back, in order; past the outage bound it fails `unavailable` and its thread is abandoned (its
// session ends), never thinned; a fenced append is a refusal, not an outage: it is not held.
// On a real PostgreSQL 15 that the test itself restarts.
import type { RuntimeEvent } from "@planbridge/contracts"
import { Context, Effect, Exit, Fiber, Layer, PubSub, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { endAbandonedSessions } from "../../src/orchestration/AbandonedSessions.ts"
import { IngestionError, RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { EventStore } from "../../src/persistence/EventStore.ts"
import { postgresStore } from "../../src/persistence/postgres/PgStore.ts"
import { SessionLeases } from "../../src/persistence/SessionLeases.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"

let postgres: TestPostgres
beforeAll(async () => {
  postgres = await startPostgres()
})
afterAll(() => postgres?.stop())

type Writer = Context.Context<RuntimeIngestion | EventStore>
const writer = (url: string, outageBoundMs?: number): Effect.Effect<Writer, unknown, Scope.Scope> =>
  Layer.build(
    (outageBoundMs === undefined ? RuntimeIngestion.layer : RuntimeIngestion.layerWith({ outageBoundMs })).pipe(
      Layer.provideMerge(postgresStore({ url }))
    )
  )

const sleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

describe("ingestion while PostgreSQL is away", () => {
  it("bursts ingested one after another through two -m immediate restarts: every one committed, in order, none failed", async () => {
    const url = await postgres.createDatabase("outage_held")
    const events = generateEventMix({ seed: 311, count: 60_000, threads: 1, prefix: "held" })
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const w = yield* writer(url)
          const ingestion = Context.get(w, RuntimeIngestion)
          let stop = false
          let sent = 0
          const failures: Array<string> = []
          // A session's way: one burst at a time, the next once the last is durable.
          const producer = yield* Effect.forkChild(
            Effect.gen(function* () {
              while (!stop && sent < events.length) {
                const burst = events.slice(sent, sent + 20)
                const exit = yield* Effect.exit(ingestion.ingestAll(burst))
                if (Exit.isFailure(exit)) failures.push(String(exit.cause))
                sent += burst.length
              }
            })
          )
          for (let restart = 0; restart < 2; restart++) {
            yield* sleep(400)
            const before = sent
            yield* Effect.promise(() => postgres.restart("immediate"))
            // The restart came under load: bursts were on their way when it began.
            expect(before).toBeGreaterThan(0)
          }
          yield* sleep(400)
          stop = true
          yield* Fiber.join(producer)
          expect(failures).toEqual([])
          const log = yield* Context.get(w, EventStore).readAll(0, events.length + 10)
          expect(log.map((s) => s.event.eventId)).toEqual(events.slice(0, sent).map((e) => e.eventId))
        })
      )
    )
  }, 120_000)

  it("past the outage bound: held events fail `unavailable`, their thread is abandoned and its session ended; once it is back, ingestion goes on", async () => {
    const url = await postgres.createDatabase("outage_bound")
    const [first, held, after] = [
      generateEventMix({ seed: 312, count: 5, threads: 1, prefix: "first" }),
      generateEventMix({ seed: 313, count: 5, threads: 1, prefix: "held" }),
      generateEventMix({ seed: 314, count: 5, threads: 1, prefix: "after" })
    ]
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const w = yield* writer(url, 600)
          const ingestion = Context.get(w, RuntimeIngestion)
          const abandoned = yield* ingestion.abandoned
          // The session of the thread, as the session manager keeps it: ended when abandoned.
          const sessionScope = yield* Scope.make()
          let ended = false
          yield* Scope.addFinalizer(
            sessionScope,
            Effect.sync(() => (ended = true))
          )
          const retired: Array<string> = []
          yield* endAbandonedSessions({
            ingestion,
            live: new Map([[held[0]!.threadId, { scope: sessionScope }]]),
            retire: (threadId, scope) =>
              Effect.sync(() => retired.push(threadId)).pipe(Effect.andThen(Scope.close(scope, Exit.void)))
          })
          yield* ingestion.ingestAll(first)
          const outage = yield* Effect.forkChild(Effect.promise(() => postgres.restart("immediate", { awayMs: 2_500 })))
          yield* sleep(300)
          const started = Date.now()
          const error = yield* Effect.flip(ingestion.ingestAll(held))
          const waited = Date.now() - started
          expect(error).toBeInstanceOf(IngestionError)
          expect(error.reason._tag).toBe("StoreOutage")
          expect(error.message).toMatch(/unavailable for \d+ ms \(bound 600 ms\)/)
          // Held (tried again) until the bound, not failed at the first attempt.
          expect(waited).toBeGreaterThanOrEqual(250)
          expect(yield* PubSub.takeAll(abandoned)).toEqual([held[0]!.threadId])
          while (!ended) yield* sleep(10)
          expect(retired).toEqual([held[0]!.threadId])
          yield* Fiber.join(outage)
          // The store is back: the bound counts from the next outage's start.
          yield* ingestion.ingestAll(after)
          const log = yield* Context.get(w, EventStore).readAll(0, 100)
          expect(log.map((s) => s.event.eventId)).toEqual([...first, ...after].map((e) => e.eventId))
        })
      )
    )
  }, 60_000)

  it("after a restart the LISTEN connection is back: another writer's commits reach this one's subscribers", async () => {
    const url = await postgres.createDatabase("outage_listen")
    const events = generateEventMix({ seed: 316, count: 10, threads: 1, prefix: "listen" })
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const [hearing, writing] = [yield* writer(url), yield* writer(url)]
          const subscription = yield* Context.get(hearing, EventStore).subscribe
          yield* Effect.promise(() => postgres.restart("immediate"))
          yield* Context.get(writing, RuntimeIngestion).ingestAll(events)
          const heard: Array<string> = []
          while (heard.length < events.length)
            heard.push(...(yield* PubSub.takeAll(subscription)).map((stored) => stored.event.eventId))
          expect(heard).toEqual(events.map((e) => e.eventId))
        }).pipe(Effect.timeout(20_000))
      )
    )
  }, 60_000)

  it("a fenced append (another replica holds the lease) fails at once as `storage`: a refusal is not held", async () => {
    const url = await postgres.createDatabase("outage_fenced")
    const events = generateEventMix({ seed: 315, count: 3, threads: 1, prefix: "fenced" })
    const threadId = events[0]!.threadId
    const replica = { token: "a-deployment-token-".padEnd(40, "z"), leaseTtlMs: 30_000 }
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const owner = yield* Layer.build(postgresStore({ url, replica }))
          expect(yield* Context.get(owner as Context.Context<SessionLeases>, SessionLeases).claim(threadId)).toEqual({
            threadId,
            fence: 1
          })
          const other = yield* Layer.build(
            RuntimeIngestion.layerWith({ outageBoundMs: 20_000 }).pipe(
              Layer.provideMerge(postgresStore({ url, replica }))
            )
          )
          const started = Date.now()
          const error = yield* Effect.flip(
            Context.get(other, RuntimeIngestion).ingestAll(events as Array<RuntimeEvent>)
          )
          expect(error.reason._tag).toBe("StoreRefused")
          expect(error.message).toMatch(/another replica holds its session lease/)
          expect(Date.now() - started).toBeLessThan(5_000)
        })
      )
    )
  }, 60_000)
})
