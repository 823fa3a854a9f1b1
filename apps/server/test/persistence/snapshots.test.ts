import { ThreadState, TURN_WINDOW, type ThreadId, type ThreadSnapshot } from "@planbridge/contracts"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { EventStore } from "../../src/persistence/EventStore.ts"
import { ThreadReads } from "../../src/persistence/ThreadReads.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { ENGINES, freshStore } from "../support/storeEngines.ts"

describe.each(ENGINES)("thread snapshots on %s", (engine) => {
  it("the server's snapshot equals a client's fold of every event, and a fold from any mid-stream snapshot", async () => {
    const store = await freshStore(engine)
    const events = generateEventMix({ seed: 51, count: 3000, threads: 3, approvals: true })
    await store.run(
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        const reads = yield* ThreadReads
        const snapshot = (threadId: string) => reads.snapshot(threadId as ThreadId)
        // What the feed sends: the same snapshot as JSON text (joined from stored JSON), here with
        // a window wider than the thread (window + pages: windowHistory.test.ts).
        const expectSameJson = (threadId: string, expected: ThreadSnapshot | undefined) =>
          Effect.map(reads.snapshotJson(threadId as ThreadId, TURN_WINDOW.max), (text) => {
            expect(expected === undefined || expected.turns.length < TURN_WINDOW.max).toBe(true)
            expect(text === undefined ? undefined : JSON.parse(text.json)).toEqual(expected)
            expect(text?.seq).toBe(expected?.seq)
          })
        const threadIds = [...new Set(events.map((e) => e.threadId))]
        const mid = new Map<string, ThreadSnapshot | undefined>()
        const receipts = []
        for (let i = 0; i < events.length; i += 250) {
          receipts.push(...(yield* ingestion.ingestAll(events.slice(i, i + 250))))
          if (i === 1250) {
            for (const id of threadIds) {
              mid.set(id, yield* snapshot(id))
              yield* expectSameJson(id, mid.get(id))
            }
          }
        }
        yield* expectSameJson("no-such-thread", undefined)
        for (const threadId of threadIds) {
          const full = ThreadState.empty(threadId, events.find((e) => e.threadId === threadId)!.provider)
          const fromMid = ThreadState.fromSnapshot(mid.get(threadId)!)
          // What a client receives: the stored events (secrets already redacted), in thread order.
          const stored = yield* (yield* EventStore).readThread(threadId as never, 0, 1_000_000)
          expect(stored.map((s) => s.threadSeq)).toEqual(
            receipts.filter((_, i) => events[i]!.threadId === threadId).map((r) => r.threadSeq)
          )
          for (const { threadSeq, event } of stored) {
            full.apply(threadSeq, event)
            fromMid.apply(threadSeq, event)
          }
          const server = (yield* snapshot(threadId))!
          expect(server.prompts.length + server.items.length).toBeGreaterThan(10)
          // Approvals carry their options and detail in the snapshot: a page loaded later can answer them.
          const approvals = server.requests.filter((q) => q.kind === "approval")
          expect(approvals.some((q) => q.status === "pending" && q.options.length === 2)).toBe(true)
          expect(approvals.some((q) => q.detail !== null)).toBe(true)
          expect(full.toSnapshot()).toEqual(server)
          yield* expectSameJson(threadId, server)
          expect(fromMid.toSnapshot()).toEqual(server)
        }
      })
    )
  })

  it("latestPlan is the newest revision by the log's order, also when two turns revise in one batch", async () => {
    const store = await freshStore(engine)
    const at = (s: number) => new Date(Date.UTC(2026, 5, 1, 9, 0, s)).toISOString()
    const base = (n: number) => ({ eventId: `lp-${n}`, provider: "codex", threadId: "thr-lp", createdAt: at(n) })
    const revision = (n: number, turnId: string, step: string) => ({
      ...base(n),
      turnId,
      type: "turn.plan.updated",
      payload: { plan: { explanation: null, steps: [{ step, status: "pending" }], source: "native" } }
    })
    await store.run(
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        const reads = yield* ThreadReads
        const latest = () =>
          Effect.map(reads.snapshot("thr-lp" as ThreadId), (s) => [s?.latestPlan?.turnId, s?.latestPlan?.plan.steps])
        // One batch: turn A, then turn B, then turn A again (a late revision of the older turn).
        yield* ingestion.ingestAll([
          { ...base(1), turnId: "turn-a", type: "turn.started", payload: {} },
          revision(2, "turn-a", "a1"),
          { ...base(3), turnId: "turn-b", type: "turn.started", payload: {} },
          revision(4, "turn-b", "b1"),
          revision(5, "turn-a", "a2")
        ])
        expect(yield* latest()).toEqual(["turn-a", [{ step: "a2", status: "pending" }]])
        // A later batch: turn B's revision is now the newest.
        yield* ingestion.ingestAll([revision(6, "turn-b", "b2")])
        expect(yield* latest()).toEqual(["turn-b", [{ step: "b2", status: "pending" }]])
      })
    )
  })
})

describe("client folds", () => {
  it("a client fold detects a gap instead of silently diverging", () => {
    const [first, second] = generateEventMix({ seed: 52, count: 2 })
    const state = ThreadState.empty(first!.threadId, first!.provider)
    state.apply(1, first!)
    expect(state.apply(1, first!)).toBe(false)
    expect(() => state.apply(3, second!)).toThrow(/gap/)
  })
})
