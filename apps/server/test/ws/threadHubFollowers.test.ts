import type { ThreadId } from "@planbridge/contracts"
import { Effect, PubSub } from "effect"
import { describe, expect, it } from "vitest"
import type { StoredEvent } from "../../src/persistence/EventStore.ts"
import { FAN_OUT_INTERVAL_MS, FAN_OUT_WRITES_PER_SECOND, fanOutIntervalMs } from "../../src/ws/ThreadHub.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { startHub } from "../support/threadHub.ts"

/**
 * A thread many follow (issue 31, item 5): each hand-on is one socket write per follower, a
 * system call of ~8.5 µs of CPU on loopback (measured: 200 sockets, 2–4 frames a write), so 200
 * followers written every 2 ms cost the server 0.85 s of CPU a second, all it had. The hub writes
 * a thread's followers at most FAN_OUT_WRITES_PER_SECOND times a second in all: the interval
 * grows with the followers past 100.
 */
const hot = "thr-many" as ThreadId
const mix = generateEventMix({ seed: 5, count: 50, threads: 1 })

describe("the fan-out of a thread many follow", () => {
  it("bounds the follower writes a second, whatever the number of followers", () => {
    for (const followers of [1, 10, 100, 200, 1_000, 10_000]) {
      const interval = fanOutIntervalMs(followers)
      expect(interval).toBeGreaterThanOrEqual(FAN_OUT_INTERVAL_MS)
      expect((followers * 1_000) / interval).toBeLessThanOrEqual(FAN_OUT_WRITES_PER_SECOND)
    }
    expect(fanOutIntervalMs(100)).toBe(FAN_OUT_INTERVAL_MS)
    expect(fanOutIntervalMs(200)).toBe(4)
  })

  it("hands 200 followers a hot thread's commits at most once per 4 ms, each every event in order", async () => {
    const committed = Effect.runSync(PubSub.unbounded<StoredEvent>())
    const hub = await startHub({ subscribe: PubSub.subscribe(committed) })
    try {
      const followers = Array.from({ length: 200 }, () => ({ at: [] as Array<number>, seqs: [] as Array<number> }))
      for (const follower of followers)
        hub.listen(hot, (run) => {
          follower.at.push(performance.now())
          follower.seqs.push(...run.events.map((e) => e.threadSeq))
        })
      // 300 commits of one event each, every one its own publication taken by the hub on its own.
      const started = performance.now()
      for (let seq = 1; seq <= 300; seq++) {
        const event = { ...mix[seq % mix.length]!, threadId: hot }
        Effect.runSync(PubSub.publishAll(committed, [{ seq, threadSeq: seq, event }]))
        await new Promise((resolve) => setImmediate(resolve))
      }
      for (let i = 0; i < 1_000 && followers.some((f) => f.seqs.length < 300); i++)
        await new Promise((resolve) => setTimeout(resolve, 1))
      const spanMs = performance.now() - started
      const all = Array.from({ length: 300 }, (_, i) => i + 1)
      for (const follower of followers) expect(follower.seqs).toEqual(all)
      const { at } = followers[0]!
      // One run per 4 ms, give or take the first and last (every 2 ms would be twice as many).
      expect(at.length).toBeLessThanOrEqual(Math.ceil(spanMs / 4) + 2)
      // libuv's timers run on a clock cut to whole milliseconds: an interval may read up to 1 ms short.
      for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(4 - 1)
    } finally {
      await hub.stop()
    }
  })
})
