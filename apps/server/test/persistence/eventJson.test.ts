import type { RuntimeEvent } from "@planbridge/contracts"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { eventJsonFits, MAX_EVENT_BYTES } from "../../src/orchestration/EventSize.ts"
import { eventJsonBytes, eventJsonLength, eventJsonOf, eventJsonText } from "../../src/persistence/EventJson.ts"
import { generateEventMix } from "../support/eventMix.ts"

const jsonValue = fc.jsonValue()
/** Text of any kind: astral characters, lone surrogates, controls, quotes, backslashes. */
const anyText = fc.string({ unit: "binary", maxLength: 40 })

/** An event of the mix with a random `raw` (or none) and random text in its payload. */
const anyEvent = fc
  .record({
    index: fc.nat({ max: 299 }),
    raw: fc.option(fc.record({ source: fc.constant("codex.app-server.notification"), payload: jsonValue })),
    text: anyText
  })
  .map(({ index, raw, text }): RuntimeEvent => {
    const base = mix[index]!
    const withText = base.type === "content.delta" ? { ...base, payload: { ...base.payload, delta: text } } : base
    return (raw === null ? withText : { ...withText, raw }) as RuntimeEvent
  })
const mix = generateEventMix({ seed: 7, count: 300, threads: 5 })

describe("an event's stored JSON (EventJson.ts)", () => {
  it("measures exactly what JSON.stringify(event) would: length, UTF-8 bytes, and so the size bound", () => {
    fc.assert(
      fc.property(anyEvent, (event) => {
        const whole = JSON.stringify(event)
        const json = eventJsonOf(event)
        expect(eventJsonLength(json)).toBe(whole.length)
        expect(eventJsonBytes(json)).toBe(Buffer.byteLength(whole, "utf8"))
        // What the log stores reads back as the event, and so does the one text a live frame splices.
        const back =
          json.raw === null ? JSON.parse(json.event) : { ...JSON.parse(json.event), raw: JSON.parse(json.raw) }
        expect(back).toStrictEqual(JSON.parse(whole))
        expect(JSON.parse(eventJsonText(json))).toStrictEqual(JSON.parse(whole))
      }),
      { numRuns: 500 }
    )
  })

  it("decides the size bound as a byte count of the whole event does, at the edge too", () => {
    const base = mix.find((e) => e.type === "content.delta")!
    const overhead = Buffer.byteLength(JSON.stringify({ ...base, payload: { ...base.payload, delta: "" } }), "utf8")
    // Three-byte characters around the bound, so that the quick length check cannot decide alone.
    const decisions = new Set<boolean>()
    for (const extra of [-3, -2, -1, 0, 1, 2, 3]) {
      const chars = Math.floor((MAX_EVENT_BYTES - overhead) / 3) + extra
      const delta = "€".repeat(chars)
      for (const event of [
        { ...base, payload: { ...base.payload, delta } },
        {
          ...base,
          payload: { ...base.payload, delta: delta.slice(0, -100) },
          raw: { source: "x", payload: "€".repeat(34) }
        }
      ] as Array<RuntimeEvent>) {
        const bytes = Buffer.byteLength(JSON.stringify(event), "utf8")
        expect(eventJsonFits(eventJsonOf(event))).toBe(bytes <= MAX_EVENT_BYTES)
        decisions.add(bytes <= MAX_EVENT_BYTES)
      }
    }
    expect([...decisions].sort()).toStrictEqual([false, true])
  })
})
