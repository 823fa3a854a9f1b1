import type { ThreadId } from "@planbridge/contracts"
import { Effect, PubSub } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import type { StoredEvent } from "../../src/persistence/EventStore.ts"
import type { LiveRun } from "../../src/ws/EventFrames.ts"
import { FAN_OUT_INTERVAL_MS } from "../../src/ws/ThreadHub.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { startHub } from "../support/threadHub.ts"

/**
 * The hub's fan-out (issue 31, item 5): a hot thread commits once per agent line, and each
 * commit used to cost one socket write per follower (200,000 writes a second for 1,000 lines a
 * second and 200 followers). A thread's followers now get at most one run per
 * FAN_OUT_INTERVAL_MS: what commits sooner is held and handed on together, in order, none lost;
 * a thread quiet for the interval is handed on at once.
 */
const hot = "thr-hot" as ThreadId
const other = "thr-other" as ThreadId
const mix = generateEventMix({ seed: 3, count: 400, threads: 1 })

const rig = async () => {
  const committed = Effect.runSync(PubSub.unbounded<StoredEvent>())
  const hub = await startHub({ subscribe: PubSub.subscribe(committed) })
  const threadSeqs = new Map<ThreadId, number>()
  let seq = 0
  /** Commits `count` events of a thread in one transaction (one publication). */
  const commit = (threadId: ThreadId, count = 1) => {
    const events: Array<StoredEvent> = []
    for (let i = 0; i < count; i++) {
      const threadSeq = (threadSeqs.get(threadId) ?? 0) + 1
      threadSeqs.set(threadId, threadSeq)
      events.push({ seq: ++seq, threadSeq, event: { ...mix[seq % mix.length]!, threadId } })
    }
    Effect.runSync(PubSub.publishAll(committed, events))
  }
  const follow = (threadId: ThreadId) => {
    const runs: Array<{ at: number; seqs: Array<number> }> = []
    hub.listen(threadId, (run: LiveRun) => {
      expect(run.threadId).toBe(threadId)
      runs.push({ at: performance.now(), seqs: run.events.map((e) => e.threadSeq) })
    })
    return runs
  }
  return { hub, commit, follow }
}

/** Lets the hub's fiber run (the publication wakes it) without waiting for any timer. */
const turn = () => new Promise((resolve) => setImmediate(resolve))
const until = async (done: () => boolean) => {
  for (let i = 0; i < 1_000 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 1))
  expect(done()).toBe(true)
}

let hubs: Array<Awaited<ReturnType<typeof startHub>>> = []
afterEach(async () => {
  for (const hub of hubs) await hub.stop()
  hubs = []
})

describe("the thread hub's fan-out", () => {
  it("hands a quiet thread's commit on at once", async () => {
    const { hub, commit, follow } = await rig()
    hubs.push(hub)
    const runs = follow(hot)
    commit(hot, 3)
    await turn()
    expect(runs.map((r) => r.seqs)).toEqual([[1, 2, 3]])
    // Quiet for the interval again: the next commit does not wait either.
    await new Promise((resolve) => setTimeout(resolve, FAN_OUT_INTERVAL_MS + 1))
    commit(hot)
    await turn()
    expect(runs.map((r) => r.seqs)).toEqual([[1, 2, 3], [4]])
  })

  it("gathers a hot thread's commits: at most one run per interval, in order, none lost", async () => {
    const { hub, commit, follow } = await rig()
    hubs.push(hub)
    const runs = follow(hot)
    const quiet = follow(other)
    // 200 commits of one event each, every one its own publication taken by the hub on its own.
    const started = performance.now()
    for (let i = 0; i < 200; i++) {
      commit(hot)
      if (i === 100) commit(other)
      await turn()
    }
    const spanMs = performance.now() - started
    await until(() => runs.reduce((n, r) => n + r.seqs.length, 0) === 200)
    expect(runs.flatMap((r) => r.seqs)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1))
    // One run per interval, give or take the first and last: far fewer than 200 commits.
    expect(runs.length).toBeLessThanOrEqual(Math.ceil(spanMs / FAN_OUT_INTERVAL_MS) + 2)
    expect(runs.length).toBeLessThan(100)
    // libuv's timers run on a clock cut to whole milliseconds, so an interval measured with
    // performance.now() may read up to 1 ms short.
    for (let i = 1; i < runs.length; i++)
      expect(runs[i]!.at - runs[i - 1]!.at).toBeGreaterThanOrEqual(FAN_OUT_INTERVAL_MS - 1)
    // Another thread is not held by the hot one.
    expect(quiet.map((r) => r.seqs)).toEqual([[1]])
  })

  it("drops what it held for a thread nobody follows any more", async () => {
    const { hub, commit, follow } = await rig()
    hubs.push(hub)
    const runs: Array<Array<number>> = []
    const stop = hub.listen(hot, (run) => runs.push(run.events.map((e) => e.threadSeq)))
    commit(hot)
    await turn()
    commit(hot)
    await turn()
    stop()
    const later = follow(other)
    commit(other)
    await until(() => later.length === 1)
    await new Promise((resolve) => setTimeout(resolve, FAN_OUT_INTERVAL_MS * 3))
    expect(runs).toEqual([[1]])
  })

  it("stops with its scope: what it held is dropped and nothing committed later is handed on", async () => {
    const { hub, commit, follow } = await rig()
    const runs = follow(hot)
    commit(hot)
    await turn()
    // Within the interval (unless this machine paused): held for a timer the scope's closing cancels.
    commit(hot)
    await turn()
    await hub.stop()
    const handedOn = runs.map((r) => r.seqs)
    expect(handedOn[0]).toEqual([1])
    commit(hot)
    await new Promise((resolve) => setTimeout(resolve, FAN_OUT_INTERVAL_MS * 5))
    expect(runs.map((r) => r.seqs)).toEqual(handedOn)
  })
})
