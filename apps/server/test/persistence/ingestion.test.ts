import { Effect, PubSub } from "effect"
import { describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { ProjectionRebuild } from "../../src/persistence/ProjectionRebuild.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { ENGINES, freshStore } from "../support/storeEngines.ts"

const count = async (store: { query: <R>(sql: string) => Promise<Array<R>> }, sql: string) =>
  Number((await store.query<{ n: number }>(sql))[0]!.n)

describe.each(ENGINES)("RuntimeIngestion on %s", (engine) => {
  it("re-ingesting the same events is a no-op", async () => {
    const store = await freshStore(engine)
    const events = generateEventMix({ seed: 1, count: 300 })
    await store.run(
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        const first = yield* ingestion.ingestAll(events)
        const before = yield* Effect.promise(store.dump)
        const again = yield* ingestion.ingestAll(events)
        for (const e of events.slice(0, 50)) yield* ingestion.ingest(e)
        expect(first.every((r) => !r.duplicate)).toBe(true)
        expect(again.every((r) => r.duplicate)).toBe(true)
        expect(again.map((r) => r.seq)).toEqual(first.map((r) => r.seq))
        expect(yield* Effect.promise(() => count(store, "select count(*) n from events"))).toBe(300)
        expect(yield* Effect.promise(store.dump)).toEqual(before)
      })
    )
  })

  it("a batch mixing known ids, new events and a repeat appends only the new ones, in order", async () => {
    const store = await freshStore(engine)
    const events = generateEventMix({ seed: 6, count: 60, threads: 2 })
    await store.run(
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        const subscription = yield* ingestion.subscribe
        const first = yield* ingestion.ingestAll(events.slice(0, 20))
        // Known ids among new events, and a new event sent twice in the same batch.
        const mixed = [...events.slice(15, 30), events[25]!, ...events.slice(5, 8), ...events.slice(30, 40)]
        const second = yield* ingestion.ingestAll(mixed)
        const third = yield* ingestion.ingestAll(events.slice(40, 60))
        expect(second.map((r) => r.duplicate)).toEqual(mixed.map((e, i) => i < 5 || i === 15 || (i > 15 && i < 19)))
        expect(second.slice(0, 5).map((r) => r.seq)).toEqual(first.slice(15, 20).map((r) => r.seq))
        expect(second[15]!.seq).toBe(second[10]!.seq)
        // New events get the next global sequences, without a gap, across the following batch too.
        const fresh = [...second.slice(5, 15), ...second.slice(19), ...third]
        expect(fresh.map((r) => r.seq)).toEqual(fresh.map((_, i) => 21 + i))
        const published = []
        for (let i = 0; i < 60; i++) published.push((yield* PubSub.take(subscription)).event.eventId)
        expect(published).toEqual(events.map((e) => e.eventId))
        const rows = yield* Effect.promise(() =>
          store.query<{ t: string; s: number; q: number }>(
            "select thread_id t, thread_seq s, seq q from events order by thread_id, thread_seq"
          )
        )
        expect(rows.length).toBe(60)
        const byThread = new Map<string, Array<number>>()
        for (const row of rows) byThread.set(row.t, [...(byThread.get(row.t) ?? []), Number(row.s)])
        for (const seqs of byThread.values()) expect(seqs).toEqual(seqs.map((_, i) => i + 1))
        const report = yield* (yield* ProjectionRebuild).rebuild({ dryRun: true })
        expect(report.differences).toEqual([])
      })
    )
  })

  it("an event sent twice in a batch of new events is stored once, the repeat a duplicate", async () => {
    const store = await freshStore(engine)
    const events = generateEventMix({ seed: 7, count: 30, threads: 2 })
    await store.run(
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        // No id is in the log yet: only the repeat itself tells the batch apart from a fresh one.
        const batch = [...events.slice(0, 12), events[4]!, ...events.slice(12, 20)]
        const receipts = yield* ingestion.ingestAll(batch)
        const next = yield* ingestion.ingestAll(events.slice(20, 30))
        expect(receipts.map((r) => r.duplicate)).toEqual(batch.map((_, i) => i === 12))
        expect(receipts[12]!.seq).toBe(receipts[4]!.seq)
        expect(receipts[12]!.threadSeq).toBe(receipts[4]!.threadSeq)
        const fresh = [...receipts.slice(0, 12), ...receipts.slice(13), ...next]
        expect(fresh.map((r) => r.seq)).toEqual(fresh.map((_, i) => 1 + i))
        expect(yield* Effect.promise(() => count(store, "select count(*) n from events"))).toBe(30)
        const rows = yield* Effect.promise(() =>
          store.query<{ t: string; s: number }>(
            "select thread_id t, thread_seq s from events order by thread_id, thread_seq"
          )
        )
        const byThread = new Map<string, Array<number>>()
        for (const row of rows) byThread.set(row.t, [...(byThread.get(row.t) ?? []), Number(row.s)])
        for (const seqs of byThread.values()) expect(seqs).toEqual(seqs.map((_, i) => i + 1))
        const report = yield* (yield* ProjectionRebuild).rebuild({ dryRun: true })
        expect(report.differences).toEqual([])
      })
    )
  })

  it("assigns gap-free per-thread sequences and a global order", async () => {
    const store = await freshStore(engine)
    const events = generateEventMix({ seed: 2, count: 500, threads: 5 })
    await store.run(
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        // Concurrent single-event ingestion from several "adapters" at once.
        yield* Effect.forEach(events, (e) => ingestion.ingest(e), { concurrency: 16 })
        const rows = yield* Effect.promise(() =>
          store.query<{ t: string; s: number }>(
            "select thread_id t, thread_seq s from events order by thread_id, thread_seq"
          )
        )
        const byThread = new Map<string, Array<number>>()
        for (const row of rows) byThread.set(row.t, [...(byThread.get(row.t) ?? []), row.s])
        for (const seqs of byThread.values()) expect(seqs).toEqual(seqs.map((_, i) => i + 1))
      })
    )
  })

  it("rejects an invalid event with the failing path and persists nothing of its batch", async () => {
    const store = await freshStore(engine)
    const [good, bad] = generateEventMix({ seed: 3, count: 2 })
    await store.run(
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        const broken = { ...bad, createdAt: "not a time" }
        const error = yield* Effect.flip(ingestion.ingestAll([good, broken]))
        expect(error.reason._tag).toBe("InvalidEvent")
        expect(error.message).toContain(`event #1`)
        expect(error.message).toContain(`["createdAt"]`)
        expect(yield* Effect.promise(() => count(store, "select count(*) n from events"))).toBe(0)
      })
    )
  })

  it("publishes only after commit, with sequence numbers", async () => {
    const store = await freshStore(engine)
    const events = generateEventMix({ seed: 4, count: 40 })
    await store.run(
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        const subscription = yield* ingestion.subscribe
        yield* ingestion.ingestAll(events)
        const seen = []
        for (let i = 0; i < events.length; i++) {
          const stored = yield* PubSub.take(subscription)
          // Visible in the database by the time it is published.
          const [row] = yield* Effect.promise(() =>
            store.query<{ seq: number }>("select seq from events where event_id = ?", [stored.event.eventId])
          )
          expect(row === undefined ? undefined : Number(row.seq)).toBe(stored.seq)
          seen.push(stored.event.eventId)
        }
        expect(seen).toEqual(events.map((e) => e.eventId))
      })
    )
  })

  it("projections equal a rebuild after thousands of randomized events", async () => {
    const store = await freshStore(engine)
    for (const seed of [11, 12, 13]) {
      const events = generateEventMix({ seed, count: 2000, threads: 6 })
      await store.run(
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
    const dump = await store.dump()
    expect(dump.threads!.length).toBe(18)
    expect(dump.plan_snapshots!.length).toBeGreaterThan(0)
    expect(dump.prompts!.some((p) => p.status === "pending")).toBe(true)
    expect(dump.prompts!.some((p) => p.resolution === "answered")).toBe(true)
  })

  it("a rebuild detects a projection that was tampered with, and repairs it", async () => {
    const store = await freshStore(engine)
    await store.run(
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        yield* ingestion.ingestAll(generateEventMix({ seed: 5, count: 400 }))
        yield* Effect.promise(() =>
          store.query(
            `update items set text = 'tampered' where (thread_id, item_id) =
               (select thread_id, item_id from items order by thread_id, item_id limit 1)`
          )
        )
        const rebuild = yield* ProjectionRebuild
        const dry = yield* rebuild.rebuild({ dryRun: true })
        expect(dry.differences.map((d) => d.table)).toEqual(["items"])
        expect(yield* Effect.promise(() => count(store, "select count(*) n from items where text = 'tampered'"))).toBe(
          1
        )
        const real = yield* rebuild.rebuild({ dryRun: false })
        expect(real.differences.map((d) => d.table)).toEqual(["items"])
        expect((yield* rebuild.rebuild({ dryRun: true })).differences).toEqual([])
      })
    )
  })
})
