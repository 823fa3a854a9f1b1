import { Effect, PubSub } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { Database } from "../../src/persistence/Database.ts"
import { ProjectionRebuild } from "../../src/persistence/ProjectionRebuild.ts"
import { dumpProjections } from "../../src/persistence/SqliteProjectionRebuild.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { runWithIngestion, tempDir } from "../support/ingestionRuntime.ts"

const cleanups: Array<() => void> = []
afterEach(() => cleanups.splice(0).forEach((f) => f()))
const dbFile = () => {
  const t = tempDir("ingest")
  cleanups.push(t.cleanup)
  return `${t.dir}/planbridge.db`
}

describe("RuntimeIngestion", () => {
  it("re-ingesting the same events is a no-op", async () => {
    const file = dbFile()
    const events = generateEventMix({ seed: 1, count: 300 })
    await runWithIngestion(
      file,
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        const { sqlite } = yield* Database
        const first = yield* ingestion.ingestAll(events)
        const before = dumpProjectionsNow(yield* Database)
        const again = yield* ingestion.ingestAll(events)
        for (const e of events.slice(0, 50)) yield* ingestion.ingest(e)
        expect(first.every((r) => !r.duplicate)).toBe(true)
        expect(again.every((r) => r.duplicate)).toBe(true)
        expect(again.map((r) => r.seq)).toEqual(first.map((r) => r.seq))
        expect((sqlite.prepare("select count(*) n from events").get() as { n: number }).n).toBe(300)
        expect(dumpProjectionsNow(yield* Database)).toEqual(before)
      })
    )
  })

  it("assigns gap-free per-thread sequences and a global order", async () => {
    const file = dbFile()
    const events = generateEventMix({ seed: 2, count: 500, threads: 5 })
    await runWithIngestion(
      file,
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        // Concurrent single-event ingestion from several "adapters" at once.
        yield* Effect.forEach(events, (e) => ingestion.ingest(e), { concurrency: 16 })
        const { sqlite } = yield* Database
        const rows = sqlite
          .prepare("select thread_id t, thread_seq s from events order by thread_id, thread_seq")
          .all() as Array<{ t: string; s: number }>
        const byThread = new Map<string, Array<number>>()
        for (const row of rows) byThread.set(row.t, [...(byThread.get(row.t) ?? []), row.s])
        for (const seqs of byThread.values()) expect(seqs).toEqual(seqs.map((_, i) => i + 1))
      })
    )
  })

  it("rejects an invalid event with the failing path and persists nothing of its batch", async () => {
    const file = dbFile()
    const [good, bad] = generateEventMix({ seed: 3, count: 2 })
    await runWithIngestion(
      file,
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        const broken = { ...bad, createdAt: "not a time" }
        const error = yield* Effect.flip(ingestion.ingestAll([good, broken]))
        expect(error.reason).toBe("invalid")
        expect(error.message).toContain(`event #1`)
        expect(error.message).toContain(`["createdAt"]`)
        const { sqlite } = yield* Database
        expect((sqlite.prepare("select count(*) n from events").get() as { n: number }).n).toBe(0)
      })
    )
  })

  it("publishes only after commit, with sequence numbers", async () => {
    const file = dbFile()
    const events = generateEventMix({ seed: 4, count: 40 })
    await runWithIngestion(
      file,
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        const { sqlite } = yield* Database
        const subscription = yield* ingestion.subscribe
        yield* ingestion.ingestAll(events)
        const seen = []
        for (let i = 0; i < events.length; i++) {
          const stored = yield* PubSub.take(subscription)
          // Visible in the database by the time it is published.
          const row = sqlite.prepare("select seq from events where event_id = ?").get(stored.event.eventId) as
            { seq: number } | undefined
          expect(row?.seq).toBe(stored.seq)
          seen.push(stored.event.eventId)
        }
        expect(seen).toEqual(events.map((e) => e.eventId))
      })
    )
  })

  it("projections equal a rebuild after thousands of randomized events", async () => {
    const file = dbFile()
    for (const seed of [11, 12, 13]) {
      const events = generateEventMix({ seed, count: 2000, threads: 6 })
      await runWithIngestion(
        file,
        Effect.gen(function* () {
          const ingestion = yield* RuntimeIngestion
          // Mixed batch sizes, with duplicates re-sent, as adapters and retries would.
          let i = 0
          while (i < events.length) {
            const size = 1 + ((i * 7919 + seed) % 97)
            yield* ingestion.ingestAll(events.slice(i, i + size))
            if (i % 3 === 0) yield* ingestion.ingestAll(events.slice(Math.max(0, i - 5), i + 1))
            i += size
          }
          const report = yield* (yield* ProjectionRebuild).rebuild({ dryRun: false })
          expect(report.differences).toEqual([])
        })
      )
    }
    // And the projections really hold what was streamed: a spot check through a fresh process view.
    await runWithIngestion(
      file,
      Effect.gen(function* () {
        const dump = dumpProjectionsNow(yield* Database)
        expect(dump.threads!.length).toBe(18)
        expect(dump.plan_snapshots!.length).toBeGreaterThan(0)
        expect(dump.prompts!.some((p) => p.status === "pending")).toBe(true)
        expect(dump.prompts!.some((p) => p.resolution === "answered")).toBe(true)
      })
    )
  })

  it("a rebuild detects a projection that was tampered with, and repairs it", async () => {
    const file = dbFile()
    await runWithIngestion(
      file,
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        yield* ingestion.ingestAll(generateEventMix({ seed: 5, count: 400 }))
        const database = yield* Database
        database.sqlite.prepare("update items set text = 'tampered' where rowid = (select min(rowid) from items)").run()
        const rebuild = yield* ProjectionRebuild
        const dry = yield* rebuild.rebuild({ dryRun: true })
        expect(dry.differences.map((d) => d.table)).toEqual(["items"])
        expect(
          (database.sqlite.prepare("select count(*) n from items where text = 'tampered'").get() as { n: number }).n
        ).toBe(1)
        const real = yield* rebuild.rebuild({ dryRun: false })
        expect(real.differences.map((d) => d.table)).toEqual(["items"])
        expect((yield* rebuild.rebuild({ dryRun: true })).differences).toEqual([])
      })
    )
  })
})

const dumpProjectionsNow = (database: { readonly db: Parameters<typeof dumpProjections>[0] }) =>
  dumpProjections(database.db)
