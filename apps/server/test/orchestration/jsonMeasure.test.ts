import type { RuntimeEvent } from "@planbridge/contracts"
import fc from "fast-check"
import { afterEach, describe, expect, it, vi } from "vitest"
import { boundEventJson } from "../../src/orchestration/EventSize.ts"
import { jsonHead, jsonUtf8Bytes } from "../../src/orchestration/JsonMeasure.ts"

afterEach(() => vi.restoreAllMocks())

/** JSON values with any UTF-16 in their strings and keys: escapes, pairs and lone surrogates. */
const anyJson = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.string({ unit: "binary" }),
    fc.string({ unit: fc.constantFrom("\ud83d", "\ude00", "\ud83d\ude00", '"', "\\", "\n", "\u0001", "é", "a") }),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 5 }),
    fc.dictionary(fc.string({ unit: "binary", maxLength: 6 }), tie("value"), { maxKeys: 5 })
  )
})).value

describe("JSON measured without serializing it", () => {
  it("counts the UTF-8 bytes of JSON.stringify exactly", () => {
    fc.assert(
      fc.property(anyJson, (value) => {
        expect(jsonUtf8Bytes(value)).toBe(Buffer.byteLength(JSON.stringify(value), "utf8"))
      }),
      { numRuns: 2000 }
    )
  })

  it("cuts the same head as JSON.stringify(value).slice(0, n)", () => {
    fc.assert(
      fc.property(anyJson, fc.nat({ max: 80 }), (value, n) => {
        expect(jsonHead(value, n)).toBe(JSON.stringify(value).slice(0, n))
      }),
      { numRuns: 2000 }
    )
  })

  it("leaves members out and writes null in arrays as JSON.stringify does", () => {
    const value = { a: undefined, b: [undefined, () => 1, Number.NaN], c: 1 }
    expect(jsonUtf8Bytes(value)).toBe(JSON.stringify(value).length)
    expect(jsonHead(value, 100)).toBe(JSON.stringify(value))
  })

  it("stubs a 20 MiB raw line without serializing it (a copy the head, a slice, kept alive)", () => {
    const MiB = 1024 * 1024
    const text = "z".repeat(20 * MiB)
    const event = {
      eventId: "delta-big",
      provider: "cursor",
      threadId: "thread-big",
      turnId: "turn-1",
      itemId: "item-1",
      createdAt: "2026-12-07T00:00:00.000Z",
      type: "content.delta",
      payload: { streamKind: "assistant_text", delta: text },
      raw: { source: "acp", direction: "in", method: "session/update", payload: { update: { content: { text } } } }
    } as unknown as RuntimeEvent
    const stringify = JSON.stringify
    let longest = 0
    vi.spyOn(JSON, "stringify").mockImplementation((...args: Parameters<typeof JSON.stringify>) => {
      const out = stringify(...args)
      longest = Math.max(longest, out.length)
      return out
    })
    const pieces = boundEventJson(event)
    vi.restoreAllMocks()
    // Only the pieces were serialized (each under the 1 MiB event bound), never the raw line.
    expect(longest).toBeLessThan(MiB)
    const raw = pieces[0]!.event.raw?.payload as { "planbridge.truncated": { bytes: number; head: string } }
    const expected = stringify(event.raw!.payload)
    expect(raw["planbridge.truncated"]).toEqual({ bytes: expected.length, head: expected.slice(0, 4096) })
  })
})
