import { ThreadHistoryPage, ThreadSnapshot, ThreadState, type OlderTurns, type ThreadId } from "@planbridge/contracts"
import { Effect, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { ThreadReads } from "../../src/persistence/ThreadReads.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { ENGINES, freshStore } from "../support/storeEngines.ts"

// The snapshot window and history pages (ThreadHistory.ts) against the whole snapshot, on both
// engines: the window holds the latest turns and what was created since the oldest of them
// started (plus what is still pending from before), and paging back from it yields every other
// record exactly once, in order, while the thread grows between pages.

const decodeSnapshot = Schema.decodeUnknownSync(ThreadSnapshot)
const decodePage = Schema.decodeUnknownSync(ThreadHistoryPage)

type Key = readonly [string, string]
const before = (a: Key, b: Key) => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1])
const LIST_KEYS = {
  items: (r: ThreadSnapshot["items"][number]): Key => [r.startedAt, r.itemId],
  proposedPlans: (r: ThreadSnapshot["proposedPlans"][number]): Key => [r.createdAt, r.planId],
  prompts: (r: ThreadSnapshot["prompts"][number]): Key => [r.createdAt, r.promptId],
  requests: (r: ThreadSnapshot["requests"][number]): Key => [r.createdAt, r.requestId]
}
type ListName = keyof typeof LIST_KEYS
const LISTS = Object.keys(LIST_KEYS) as ReadonlyArray<ListName>
const turnKey = (t: ThreadSnapshot["turns"][number]): Key => [t.startedAt, t.turnId]
/** The records of `list` whose key is in [from, to) (undefined: unbounded). */
const inRange = <L extends ListName>(whole: ThreadSnapshot, list: L, from: Key | undefined, to: Key | undefined) =>
  (whole[list] as ReadonlyArray<never>).filter((r) => {
    const key = LIST_KEYS[list](r)
    return (from === undefined || !before(key, from)) && (to === undefined || before(key, to))
  })
const revisionsOf = (whole: ThreadSnapshot, turns: ThreadSnapshot["turns"]) =>
  Object.fromEntries(
    turns
      .filter((t) => whole.planRevisions[t.turnId] !== undefined)
      .map((t) => [t.turnId, whole.planRevisions[t.turnId]])
  )

describe.each(ENGINES)("snapshot window and history pages on %s", (engine) => {
  it("window + every page back = the whole history, in order, each record once, while the thread grows", async () => {
    const store = await freshStore(engine)
    let run = 0
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 1, max: 1_000_000 }),
        (window, limit, growthSlices, seed) =>
          store.run(
            Effect.gen(function* () {
              const ingestion = yield* RuntimeIngestion
              const reads = yield* ThreadReads
              const events = generateEventMix({ seed, count: 900, threads: 1, prefix: `w${run++}`, approvals: true })
              const threadId = events[0]!.threadId as ThreadId
              yield* ingestion.ingestAll(events.slice(0, 600))
              const whole = (yield* reads.snapshot(threadId))!
              const text = (yield* reads.snapshotJson(threadId, window))!
              const snapshot = decodeSnapshot(JSON.parse(text.json))
              expect(text.seq).toBe(whole.seq)
              expect(whole.turns.length).toBeGreaterThan(8) // so that every window leaves pages to read

              // The window: the latest turns, what was created since the oldest started, the pending before it.
              const turns = whole.turns.slice(Math.max(0, whole.turns.length - window))
              expect(snapshot.turns).toEqual(turns)
              const from = whole.turns.length > window ? turnKey(turns[0]!) : undefined
              const older: OlderTurns | null = from === undefined ? null : { before: turns[0]!.turnId }
              expect(snapshot.olderTurns).toEqual(older)
              for (const list of LISTS) {
                const pendingBefore =
                  from !== undefined && (list === "prompts" || list === "requests")
                    ? whole[list].filter((r) => r.status === "pending" && before(LIST_KEYS[list](r as never), from))
                    : []
                expect(snapshot[list]).toEqual([...pendingBefore, ...inRange(whole, list, from, undefined)])
              }
              expect(snapshot.planRevisions).toEqual(revisionsOf(whole, turns))
              const { turns: _t, items: _i, proposedPlans: _p, prompts: _q, requests: _r, ...head } = whole
              const {
                turns: _t2,
                items: _i2,
                proposedPlans: _p2,
                prompts: _q2,
                requests: _r2,
                ...windowHead
              } = snapshot
              expect(windowHead).toEqual({ ...head, planRevisions: snapshot.planRevisions, olderTurns: older })

              // Paging back, the thread growing between pages: each page is its range of the thread as it is then.
              const pages: Array<ThreadHistoryPage> = []
              const growth = events.slice(600)
              const slice = Math.ceil(growth.length / Math.max(1, growthSlices))
              let cursor = snapshot.olderTurns
              let to: readonly [string, string] | undefined = from
              while (cursor !== null) {
                if (growthSlices > 0 && growth.length > 0) yield* ingestion.ingestAll(growth.splice(0, slice))
                const now = (yield* reads.snapshot(threadId))!
                const pageText = yield* reads.historyJson(threadId, cursor.before, limit)
                if (typeof pageText === "string") throw new Error(`refused: ${pageText}`)
                const page = decodePage(JSON.parse(pageText.json))
                expect(page.seq).toBe(now.seq)
                const end = now.turns.findIndex((t) => t.turnId === cursor!.before)
                const pageTurns = now.turns.slice(Math.max(0, end - limit), end)
                expect(page.turns).toEqual(pageTurns)
                const pageFrom = end > limit ? turnKey(pageTurns[0]!) : undefined
                for (const list of LISTS) expect(page[list]).toEqual(inRange(now, list, pageFrom, to))
                expect(page.planRevisions).toEqual(revisionsOf(now, pageTurns))
                expect(page.olderTurns).toEqual(pageFrom === undefined ? null : { before: pageTurns[0]!.turnId })
                pages.push(page)
                cursor = page.olderTurns
                to = pageFrom
              }

              // Together: the history as of the window's seq, exactly once each, in order.
              const oldestFirst = [...pages].reverse()
              const ids = <L extends ListName | "turns">(list: L, id: (r: never) => string) => [
                ...oldestFirst.flatMap((p) => (p[list] as ReadonlyArray<never>).map(id)),
                ...(list === "turns"
                  ? snapshot.turns.map((t) => t.turnId)
                  : inRange(snapshot, list as ListName, from, undefined).map(id))
              ]
              expect(ids("turns", (t: ThreadSnapshot["turns"][number]) => t.turnId)).toEqual(
                whole.turns.map((t) => t.turnId)
              )
              for (const list of LISTS) {
                const id = (r: never) => LIST_KEYS[list](r)[1]
                expect(ids(list, id)).toEqual((whole[list] as ReadonlyArray<never>).map(id))
              }
            })
          )
      ),
      { numRuns: engine === "sqlite" ? 20 : 8 }
    )
  }, 240_000)

  it("a client's fold of the window, every page and the events after it equals the whole thread", async () => {
    const store = await freshStore(engine)
    await store.run(
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        const reads = yield* ThreadReads
        const events = generateEventMix({ seed: 61, count: 1500, threads: 1, prefix: "fold", approvals: true })
        const threadId = events[0]!.threadId as ThreadId
        yield* ingestion.ingestAll(events.slice(0, 1000))
        const text = (yield* reads.snapshotJson(threadId, 3))!
        const state = ThreadState.fromSnapshot(decodeSnapshot(JSON.parse(text.json)))
        expect(state.olderTurns).not.toBeNull()
        const receipts = yield* ingestion.ingestAll(events.slice(1000))
        receipts.forEach((r, i) => state.apply(r.threadSeq, events[1000 + i]!))
        while (state.olderTurns !== null) {
          const page = yield* reads.historyJson(threadId, state.olderTurns.before, 4)
          if (typeof page === "string") throw new Error(`refused: ${page}`)
          state.addOlder(decodePage(JSON.parse(page.json)))
        }
        expect(state.toSnapshot()).toEqual(yield* reads.snapshot(threadId))
      })
    )
  }, 120_000)

  it("what comes before the first turn's start is in the window or the last page, never left out", async () => {
    const store = await freshStore(engine)
    await store.run(
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        const reads = yield* ThreadReads
        // Without its `turn.started`, the first turn's row starts at its completion: its items,
        // prompts and requests come before the thread's first turn key.
        const mix = generateEventMix({ seed: 63, count: 400, threads: 1, prefix: "early", approvals: true })
        const first = mix.findIndex((e) => e.type === "turn.started")
        const events = mix.filter((_, i) => i !== first)
        const threadId = events[0]!.threadId as ThreadId
        yield* ingestion.ingestAll(events)
        const whole = (yield* reads.snapshot(threadId))!
        const earliest = turnKey(whole.turns[0]!)
        expect(whole.items.some((i) => before(LIST_KEYS.items(i), earliest))).toBe(true)
        const n = whole.turns.length
        const itemIds = (...lists: ReadonlyArray<{ readonly items: ReadonlyArray<{ readonly itemId: string }> }>) =>
          lists.flatMap((l) => l.items.map((i) => i.itemId))
        // A window of every turn: no older turns, and everything in it.
        const all = decodeSnapshot(JSON.parse((yield* reads.snapshotJson(threadId, n))!.json))
        expect(all.olderTurns).toBeNull()
        expect(itemIds(all)).toEqual(itemIds(whole))
        // Pages whose last one holds exactly `limit` turns: it starts at the thread's start.
        for (const limit of [1, 2, (n - 2) / 2].filter((l) => Number.isInteger(l) && (n - 2) % l === 0)) {
          const window = decodeSnapshot(JSON.parse((yield* reads.snapshotJson(threadId, 2))!.json))
          const pages = []
          for (let older = window.olderTurns; older !== null;) {
            const text = yield* reads.historyJson(threadId, older.before, limit)
            if (typeof text === "string") throw new Error(`refused: ${text}`)
            const page = decodePage(JSON.parse(text.json))
            pages.unshift(page)
            older = page.olderTurns
          }
          expect(pages.at(0)!.turns).toHaveLength(limit)
          expect(itemIds(...pages, window)).toEqual(itemIds(whole))
        }
      })
    )
  }, 120_000)

  it("refuses a page of an unknown thread or before a turn that is not the thread's", async () => {
    const store = await freshStore(engine)
    await store.run(
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        const reads = yield* ThreadReads
        const events = generateEventMix({ seed: 62, count: 400, threads: 2, prefix: "refuse" })
        yield* ingestion.ingestAll(events)
        const [a, b] = [...new Set(events.map((e) => e.threadId))] as Array<ThreadId>
        const turnOfB = (yield* reads.snapshot(b!))!.turns[0]!.turnId
        expect(yield* reads.historyJson("no-such-thread" as ThreadId, turnOfB, 5)).toBe("unknown_thread")
        expect(yield* reads.historyJson(a!, "no-such-turn", 5)).toBe("invalid_cursor")
        expect(yield* reads.historyJson(a!, turnOfB, 5)).toBe("invalid_cursor")
        // The oldest turn has nothing before it: an empty page, and no further cursor.
        const oldest = (yield* reads.snapshot(a!))!.turns[0]!.turnId
        const page = yield* reads.historyJson(a!, oldest, 5)
        if (typeof page === "string") throw new Error(`refused: ${page}`)
        expect(decodePage(JSON.parse(page.json))).toMatchObject({ turns: [], olderTurns: null })
      })
    )
  }, 120_000)
})
