import { afterAll, describe, expect, it } from "vitest"
import { cleanup } from "../chaos/rig.ts"
import { BIG_LINE_BOUND, runBigLine } from "../support/hotThread.ts"

/**
 * Issue 31, item 5: one 20 MiB agent line (the scripted Cursor agent's one chunk, through
 * `planbridge serve`, one subscriber) costs the server at most BIG_LINE_BOUND times the line in
 * peak memory (the kernel's high-water mark over the resident memory before the turn). It cost
 * 775–810 MB: the oversized events serialized about five times each, their text bound whole in
 * one statement, and a lagging subscriber's catch-up reading the rest of the log at every drain;
 * then 290–296 MiB, the live run's frames all made (and joined) for a follower with room for
 * one; 251–260 MiB with each frame made when first written; 187–227 MiB with the raw stub
 * counted without serializing the raw line; 170–186 MiB with each event's JSON made flat when
 * made and each live frame encoded part by part (213–224 MiB before, measured alike). And the
 * issue's second case: three 12 MiB lines of one turn followed by ten subscribers (843 MB in the
 * issue's run; 297–370 MiB, then 256–332 MiB).
 */
afterAll(cleanup)

describe("big lines", () => {
  it(`a 20 MiB line costs the server at most ${BIG_LINE_BOUND}× the line in peak memory`, async () => {
    const { lineBytes, peakGrowth } = await runBigLine({ mib: 20, subscribers: 1 })
    console.log(`peak memory growth for a 20 MiB line: ${(peakGrowth / 2 ** 20).toFixed(0)} MiB`)
    expect(peakGrowth).toBeGreaterThan(lineBytes)
    expect(peakGrowth).toBeLessThanOrEqual(BIG_LINE_BOUND * lineBytes)
  }, 360_000)

  it(`three 12 MiB lines of one turn, ten subscribers: at most ${BIG_LINE_BOUND}× the lines`, async () => {
    const { lineBytes, peakGrowth } = await runBigLine({ mib: 12, chunks: 3, subscribers: 10 })
    console.log(`peak memory growth for three 12 MiB lines, ten subscribers: ${(peakGrowth / 2 ** 20).toFixed(0)} MiB`)
    expect(peakGrowth).toBeGreaterThan(lineBytes)
    expect(peakGrowth).toBeLessThanOrEqual(BIG_LINE_BOUND * lineBytes)
  }, 360_000)
})
