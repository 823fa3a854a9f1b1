import type { ThreadId } from "@planbridge/contracts"
import { Effect, PubSub } from "effect"
import { describe, expect, it } from "vitest"
import type { StoredEvent } from "../../src/persistence/EventStore.ts"
import {
  FAN_OUT_LOOP_SHARE,
  FAN_OUT_INTERVAL_MS,
  FAN_OUT_MAX_INTERVAL_MS,
  fanOutIntervalMs
} from "../../src/ws/ThreadHub.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { startHub } from "../support/threadHub.ts"

/**
 * A hot thread's fan-out holds the event loop at most a third of the time (issue 31, item 5,
 * round 4): a follower write costs ~9–13 µs of CPU on loopback, so 200 followers written every
 * 4 ms kept the server's one core 90–95 % busy and every pause queued the stream. The interval
 * follows what the thread's fan-outs measured here take, whatever a write costs on this machine.
 */
const hot = "thr-costly" as ThreadId
const mix = generateEventMix({ seed: 7, count: 50, threads: 1 })

describe("the loop share of a hot thread's fan-out", () => {
  it("waits at least three times what the fan-outs take, at most FAN_OUT_MAX_INTERVAL_MS", () => {
    expect(fanOutIntervalMs(10, 0)).toBe(FAN_OUT_INTERVAL_MS)
    expect(fanOutIntervalMs(10, 3)).toBeCloseTo(3 / FAN_OUT_LOOP_SHARE)
    expect(fanOutIntervalMs(200, 1)).toBe(4)
    expect(fanOutIntervalMs(10, 1_000)).toBe(FAN_OUT_MAX_INTERVAL_MS)
    // The writes-a-second bound still holds past the cap.
    expect(fanOutIntervalMs(10_000, 1_000)).toBe(200)
  })

  it("spaces the runs of a thread whose fan-outs take 10 ms ≥ 30 ms apart, every event in order", async () => {
    const committed = Effect.runSync(PubSub.unbounded<StoredEvent>())
    // The hub's clock, advanced by the followers: each takes 0.5 ms a run, a fan-out 10 ms, and
    // the test does not depend on how fast this machine runs a busy loop.
    let clockMs = 0
    const hub = await startHub({ subscribe: PubSub.subscribe(committed) }, () => clockMs)
    try {
      // Without the share bound the interval would be FAN_OUT_INTERVAL_MS (2 ms).
      const followers = Array.from({ length: 20 }, () => [] as Array<number>)
      const at: Array<number> = []
      followers.forEach((seqs, i) =>
        hub.listen(hot, (run) => {
          if (i === 0) at.push(performance.now())
          clockMs += 0.5
          seqs.push(...run.events.map((e) => e.threadSeq))
        })
      )
      const count = 150
      for (let seq = 1; seq <= count; seq++) {
        const event = { ...mix[seq % mix.length]!, threadId: hot }
        Effect.runSync(PubSub.publishAll(committed, [{ seq, threadSeq: seq, event }]))
        await new Promise((resolve) => setTimeout(resolve, 1))
      }
      for (let i = 0; i < 2_000 && followers.some((f) => f.length < count); i++)
        await new Promise((resolve) => setTimeout(resolve, 1))
      const all = Array.from({ length: count }, (_, i) => i + 1)
      for (const seqs of followers) expect(seqs).toEqual(all)
      expect(at.length).toBeGreaterThan(2)
      // libuv's timers run on a clock cut to whole milliseconds: an interval may read up to 1 ms short.
      for (let i = 1; i < at.length; i++)
        expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(10 / FAN_OUT_LOOP_SHARE - 1)
    } finally {
      await hub.stop()
    }
  })
})
