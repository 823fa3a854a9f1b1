import { Deferred, Effect, Layer } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { NOTIFY_BOUNDS, Notifications } from "../../src/notify/Notifications.ts"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { NotificationStore } from "../../src/persistence/NotificationStore.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { ingestionLayer, tempDir } from "../support/ingestionRuntime.ts"

const scratch = tempDir("send-loop")
afterAll(() => scratch.cleanup())

/** A webhook on loopback: answers 500 to its first POST and 201 after; when each arrived (ms). */
const startWebhook = async () => {
  const arrivals: Array<number> = []
  const server = createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      arrivals.push(performance.now())
      res.writeHead(arrivals.length === 1 ? 500 : 201).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    arrivals,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** Waits for `done`, looking every 10 ms, for at most `ms`. */
const waitFor = (done: () => boolean, ms: number) =>
  Effect.gen(function* () {
    const until = performance.now() + ms
    while (!done() && performance.now() < until) yield* Effect.sleep(10)
    return done()
  })

describe("the notification sender", () => {
  it("idles without looking at the outbox; a question wakes it at once; a failed delivery is retried when due", async () => {
    const webhook = await startWebhook()
    let looks = 0
    const firstLook = Deferred.makeUnsafe<void>()
    /** The real store, its looks (`derive`) counted. */
    const counting = Layer.effect(
      NotificationStore,
      Effect.map(Effect.service(NotificationStore), (store) =>
        NotificationStore.of({
          ...store,
          derive: (limit, now) =>
            store.derive(limit, now).pipe(
              Effect.tap(() =>
                Effect.sync(() => {
                  looks++
                  Deferred.doneUnsafe(firstLook, Effect.void)
                })
              )
            )
        })
      )
    )
    const layer = Notifications.layer(join(scratch.dir, "data")).pipe(
      Layer.provide(counting),
      Layer.provideMerge(ingestionLayer(join(scratch.dir, "store.db")))
    )
    const program = Effect.gen(function* () {
      const store = yield* NotificationStore
      yield* store.addSink({
        sinkId: "hook-1",
        kind: "webhook",
        endpoint: webhook.url,
        clientId: null,
        createdAt: new Date().toISOString()
      })
      // The first look places the outbox's cursor at the log's end; from then on, idle.
      yield* Deferred.await(firstLook)
      const idleFrom = looks
      yield* Effect.sleep(1_200)
      const idleLooks = looks - idleFrom
      // A thread's events up to its first question: the question wakes the sender.
      const events = generateEventMix({ seed: 7, count: 2_000, threads: 1 })
      const question = events.findIndex((e) => e.type === "user-input.requested")
      if (question < 0) return yield* Effect.die(new Error("the event mix asked no question"))
      const ingestion = yield* RuntimeIngestion
      const askedAt = performance.now()
      yield* ingestion.ingestAll(events.slice(0, question + 1))
      const retried = yield* waitFor(() => webhook.arrivals.length >= 2, 10_000)
      return { idleLooks, askedAt, retried }
    })
    try {
      const { idleLooks, askedAt, retried } = await Effect.runPromise(Effect.scoped(Effect.provide(program, layer)))
      // The 250 ms poll this replaced looked ~5 times in that while.
      expect(idleLooks).toBeLessThanOrEqual(1)
      expect(retried).toBe(true)
      const [first, second] = webhook.arrivals
      // Woken by the commit, not by the idle look (every NOTIFY_BOUNDS.idleLookMs).
      expect(first! - askedAt).toBeLessThan(NOTIFY_BOUNDS.idleLookMs / 2)
      // The 500 is retried after the first retry delay (1 s), by the sender's own timer.
      expect(second! - first!).toBeGreaterThanOrEqual(NOTIFY_BOUNDS.firstRetryDelayMs - 50)
      expect(second! - first!).toBeLessThan(NOTIFY_BOUNDS.idleLookMs)
    } finally {
      await webhook.close()
    }
  })
})
