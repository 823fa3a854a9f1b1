import type { RuntimeEvent } from "@planbridge/contracts"
import { describe, expect, it } from "vitest"
import { boundEventJson } from "../../src/orchestration/EventSize.ts"

const MiB = 1024 * 1024

/**
 * Issue 31, item 5: the JSON of each piece of a huge event is made flat when it is made.
 * `JSON.stringify` returns a rope; the store's binding (and a frame) needs it in one piece and
 * copied it flat later, when its parts had been promoted: a second, late-collected copy of the
 * line. Reading the pieces whole (as the binding does) then allocates nothing.
 */
describe("a huge event's pieces", () => {
  it("are flat strings: reading them whole copies nothing", () => {
    const text = "x".repeat(20 * MiB)
    const event = {
      eventId: "delta-flat",
      provider: "cursor",
      threadId: "thread-flat",
      turnId: "turn-1",
      itemId: "item-1",
      createdAt: "2026-12-07T03:00:00.000Z",
      type: "content.delta",
      payload: { streamKind: "assistant_text", delta: text }
    } as unknown as RuntimeEvent
    const pieces = boundEventJson(event)
    expect(pieces.length).toBeGreaterThan(100)
    const before = process.memoryUsage().heapUsed
    let bytes = 0
    // Measuring a rope's UTF-8 bytes flattens it (a copy); a flat string is read in place.
    for (const piece of pieces) bytes += Buffer.byteLength(piece.json.event, "utf8")
    const grown = process.memoryUsage().heapUsed - before
    expect(bytes).toBeGreaterThan(text.length)
    // Unflattened, this was a copy of every piece: ~20 MiB.
    expect(grown).toBeLessThan(2 * MiB)
  })
})
