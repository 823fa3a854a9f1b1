import { Effect, Fiber, Queue } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { GROUP_COMMIT_WINDOW_MS } from "../../../src/provider/kernel/groupCommit.ts"
import { mapPeerLines, type JsonRpcPeer } from "../../../src/provider/kernel/JsonRpcPeer.ts"
import type { TranscriptEntry } from "../../../src/provider/kernel/transcript.ts"

/**
 * Group commit of a hot session (issue 31, item 5), on the test clock: a provider writes one
 * line every `gapMs` into a peer's queue; the session's reader (`mapPeerLines`, as Codex's and
 * ACP's) maps a burst at a time, and each burst is one transaction (`SessionRunner.applyAll`),
 * so the number of bursts is the number of commits.
 */
type Offered = { readonly n: number; readonly at: number }
const stream = (count: number, gapMs: number) =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<{ readonly line: TranscriptEntry; readonly release: () => void }>()
    const now = TestClock.testClockWith((clock) => Effect.sync(() => clock.currentTimeMillisUnsafe()))
    const producer = yield* Effect.forkChild(
      Effect.gen(function* () {
        for (let n = 0; n < count; n++) {
          const msg: Offered = { n, at: yield* now }
          yield* Queue.offer(queue, { line: { dir: "in", msg }, release: () => undefined })
          yield* Effect.sleep(gapMs)
        }
      })
    )
    const bursts: Array<ReadonlyArray<number>> = []
    /** How long each line waited in the queue before its burst was taken (ms). */
    const held: Array<number> = []
    // Only what mapPeerLines uses of a peer.
    const peer: Pick<JsonRpcPeer<TranscriptEntry>, "takeAvailable" | "mapped"> = {
      takeAvailable: Queue.takeBetween(queue, 1, 257),
      mapped: () => undefined
    }
    const offered = (line: TranscriptEntry) => line.msg as Offered
    const map = (lines: ReadonlyArray<TranscriptEntry>) =>
      Effect.gen(function* () {
        const at = yield* now
        for (const line of lines) held.push(at - offered(line).at)
        bursts.push(lines.map((line) => offered(line).n))
      })
    const reader = yield* Effect.forkChild(
      mapPeerLines(peer as JsonRpcPeer<TranscriptEntry>, map, (line) => offered(line).n === count - 1)
    )
    for (let ms = 0; ms < count * gapMs + 20; ms++) {
      yield* Effect.yieldNow
      yield* TestClock.adjust(1)
      yield* Effect.yieldNow
    }
    yield* Fiber.join(reader)
    yield* Fiber.join(producer)
    return { bursts, held }
  }).pipe(Effect.provide(TestClock.layer()), Effect.scoped, Effect.runPromise)

describe("group commit of a hot session", () => {
  it("a line a millisecond: the lines that arrive while the session is hot share a transaction", async () => {
    const { bursts, held } = await stream(200, 1)
    // Every line once, in order.
    expect(bursts.flat()).toEqual(Array.from({ length: 200 }, (_, n) => n))
    // Without the window each line is taken the moment it arrives: 200 bursts of one line.
    expect(bursts.length).toBeLessThanOrEqual(200 / 2 + 2)
    // No line is held longer than the window.
    expect(Math.max(...held)).toBeLessThanOrEqual(GROUP_COMMIT_WINDOW_MS)
  })

  it("a session that is not streaming is never held", async () => {
    const { bursts, held } = await stream(20, GROUP_COMMIT_WINDOW_MS + 3)
    expect(bursts).toEqual(Array.from({ length: 20 }, (_, n) => [n]))
    expect(held.every((ms) => ms === 0)).toBe(true)
  })
})
