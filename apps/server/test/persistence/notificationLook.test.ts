import { notificationMessageOf, type RuntimeEvent } from "@planbridge/contracts"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { NotificationStore, type NotificationSink } from "../../src/persistence/NotificationStore.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { runWithIngestion, tempDir } from "../support/ingestionRuntime.ts"

const scratch = tempDir("notification-look")
afterAll(() => scratch.cleanup())

const sinks: ReadonlyArray<NotificationSink> = [
  {
    sinkId: "push-1",
    kind: "webpush",
    endpoint: "https://push.example/1",
    p256dh: "p256dh-key",
    auth: "auth-secret",
    clientId: "client-a",
    createdAt: "2026-12-07T12:00:00.000Z"
  },
  {
    sinkId: "hook-1",
    kind: "webhook",
    endpoint: "http://127.0.0.1:9/hook",
    clientId: null,
    createdAt: "2026-12-07T12:00:01.000Z"
  }
]

/**
 * The sender's look on SQLite (`derive`, then `claim`; statements prepared once): every notifying
 * event of the log becomes one outbox row per sink, once, and a claim hands each due row out
 * with its sink as it was added, once per claim lease.
 */
describe("the SQLite notification look", () => {
  it("derives one row per sink and notifying event, once; claims each with its sink, once per lease", async () => {
    const events = generateEventMix({ seed: 29, count: 1_500, threads: 4 })
    const notifying = events.filter((event) => notificationMessageOf(event as RuntimeEvent) !== undefined)
    expect(notifying.length).toBeGreaterThan(20)
    await runWithIngestion(
      `${scratch.dir}/look.db`,
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        const store = yield* NotificationStore
        const now = Date.parse("2026-12-07T12:00:02.000Z")
        // The first look places the cursor at the log's end: what came before is never notified.
        yield* ingestion.ingestAll(events.slice(0, 10))
        expect(yield* store.derive(100, now)).toBe(0)
        for (const sink of sinks) expect(yield* store.addSink(sink)).toBe("added")
        const later = events.slice(10)
        for (let i = 0; i < later.length; i += 250) yield* ingestion.ingestAll(later.slice(i, i + 250))
        const expected = later.filter((event) => notificationMessageOf(event as RuntimeEvent) !== undefined)

        // Looks of at most 10 notifying events each, until one derives nothing.
        let added = 0
        for (let looks = 0; looks < 1_000; looks++) {
          const n = yield* store.derive(10, now)
          if (n === 0) break
          added += n
        }
        expect(added).toBe(expected.length * sinks.length)
        expect(yield* store.derive(10, now)).toBe(0)

        const claimed = yield* store.claim("replica-a", now, 30_000, 10_000)
        expect(claimed).toHaveLength(added)
        for (const sink of sinks) {
          const mine = claimed.filter((c) => c.sink.sinkId === sink.sinkId)
          expect(mine).toHaveLength(expected.length)
          for (const c of mine) expect(c.sink).toEqual(sink)
        }
        for (const c of claimed) {
          expect(c.attempts).toBe(0)
          expect(c.notificationId.startsWith(`${c.sink.sinkId}|${c.message.kind}|`)).toBe(true)
        }
        // Claimed: no one else gets them until the claim runs out.
        expect(yield* store.claim("replica-b", now + 29_999, 30_000, 10_000)).toEqual([])
        const again = yield* store.claim("replica-b", now + 30_000, 30_000, 10_000)
        expect(again.map((c) => c.notificationId).sort()).toEqual(claimed.map((c) => c.notificationId).sort())
        // A limit is a limit, and nothing is due before its time.
        expect(yield* store.claim("replica-c", now + 60_000, 30_000, 3)).toHaveLength(3)
        expect(yield* store.claim("replica-c", now - 1, 30_000, 10_000)).toEqual([])
      })
    )
  })
})
