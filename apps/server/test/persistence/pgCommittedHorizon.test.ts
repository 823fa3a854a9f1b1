// The notification outbox's committed horizon on a real PostgreSQL 15 (issue 32): while an append
// is held open, deriving waits for it (so the outbox never skips its prompt) without holding up the
// other threads' appends, on this store or another.
import type { RuntimeEvent } from "@planbridge/contracts"
import { Context, Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EventStore } from "../../src/persistence/EventStore.ts"
import { NotificationStore } from "../../src/persistence/NotificationStore.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { holdSlowThread, pgReplica, SLOW_THREAD } from "../support/pgReplicas.ts"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"

let postgres: TestPostgres
beforeAll(async () => {
  postgres = await startPostgres()
})
afterAll(() => postgres?.stop())

/** How long the trigger holds an insert into the slow thread. */
const SLOW_INSERT_MS = 2_000

describe("PostgreSQL committed horizon", () => {
  it("deriving waits for an append held open, and other threads' appends go on meanwhile", async () => {
    const url = await postgres.createDatabase("committed_horizon")
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const [a, b] = [yield* Layer.build(pgReplica(url)), yield* Layer.build(pgReplica(url))]
          const notifications = Context.get(b, NotificationStore)
          yield* notifications.addSink({
            sinkId: "sink-1",
            kind: "webhook",
            endpoint: "http://127.0.0.1:9/hook",
            clientId: null,
            createdAt: new Date().toISOString()
          })
          // The first derivation places the cursor at the log's end.
          yield* notifications.derive(100, Date.now())
          yield* holdSlowThread(url, SLOW_INSERT_MS)
          const prompt = generateEventMix({ seed: 93, count: 400, threads: 1, prefix: "slow" }).find(
            (e) => e.type === "user-input.requested"
          )!
          const slow = [{ ...prompt, threadId: SLOW_THREAD } as RuntimeEvent]
          const fast = generateEventMix({ seed: 94, count: 3, threads: 1, prefix: "fast" })
          const slowAppend = Effect.runPromise(Context.get(a, EventStore).appendBatch(slow))
          // The slow transaction is inside its insert (its `seq` drawn, below the fast ones).
          yield* Effect.sleep("300 millis")
          const derived = Effect.runPromise(notifications.derive(100, Date.now()))
          yield* Effect.sleep("100 millis")
          const fastStarted = Date.now()
          yield* Context.get(b, EventStore).appendBatch(fast)
          const fastMs = Date.now() - fastStarted
          // Under an exclusive lock for the horizon, the fast append queued behind it until the slow commit.
          expect(fastMs).toBeLessThan(1_000)
          yield* Effect.promise(() => slowAppend)
          yield* Effect.promise(() => derived)
          yield* notifications.derive(100, Date.now())
          const { recent } = yield* notifications.status(10)
          // The slow prompt, committed after larger `seq`s, was not skipped.
          expect(recent.map((row) => row.promptId)).toContain(
            prompt.type === "user-input.requested" ? prompt.payload.prompt.promptId : undefined
          )
        })
      )
    )
  }, 60_000)
})
