import type { RuntimeEvent, ThreadId } from "@planbridge/contracts"
import { describe, expect, it } from "vitest"
import { eventJsonOf, type EventJson } from "../../src/persistence/EventJson.ts"
import type { StoredEvent } from "../../src/persistence/EventStore.ts"
import { eventFrameText, JOINED_RUN_BYTES, liveRunsOf, textFrameHeader } from "../../src/ws/EventFrames.ts"
import { generateEventMix } from "../support/eventMix.ts"

/**
 * A live frame is written part by part into its buffer (issue 31, item 5: the frame's text is no
 * longer made as one string and copied flat to be measured): its bytes are exactly those of the
 * frame text around the stored JSON, with `raw` spliced in, for every kind of event, multi-byte
 * text included, and with or without the stored JSON.
 */
const threadId = "thr-frames" as ThreadId
const mix = generateEventMix({ seed: 31, count: 200, threads: 1 }).map((e) => ({ ...e, threadId }))
const withRaw: RuntimeEvent = {
  ...mix.find((e) => e.type === "content.delta")!,
  raw: { source: "acp", method: "session/update", payload: { text: 'é \u{1F600} "quoted"\n', n: [1, null] } }
}
const events = [...mix, withRaw]

/** The stored JSON as one text, `raw` spliced in last (as the log's readers get it). */
const wholeJson = (json: EventJson) =>
  json.raw === null ? json.event : `${json.event.slice(0, -1)},"raw":${json.raw}}`

/** The frame as it was made before: the whole text, then encoded behind its header. */
const expectedFrame = (stored: StoredEvent): Buffer => {
  const text =
    stored.json === undefined
      ? JSON.stringify({ type: "event", threadId: stored.event.threadId, seq: stored.threadSeq, event: stored.event })
      : eventFrameText(JSON.stringify(stored.event.threadId), stored.threadSeq, wholeJson(stored.json))
  const payload = Buffer.from(text, "utf8")
  return Buffer.concat([textFrameHeader(payload.length), payload])
}

describe("live frame bytes", () => {
  it("are the frame text around the stored JSON, raw spliced in", () => {
    const stored: Array<StoredEvent> = events.map((event, i) => ({
      seq: i + 1,
      threadSeq: i + 1,
      event,
      json: eventJsonOf(event)
    }))
    expect(stored.some((s) => s.json?.raw !== null)).toBe(true)
    expect(stored.some((s) => s.json?.raw === null)).toBe(true)
    const [run] = liveRunsOf(stored)
    expect(run!.events).toHaveLength(stored.length)
    stored.forEach((s, i) => {
      const frame = run!.frame(i)
      expect(frame.equals(expectedFrame(s))).toBe(true)
      const lengthByte = frame[1]! & 0x7f
      const headerBytes = lengthByte < 126 ? 2 : lengthByte === 126 ? 4 : 10
      const body = JSON.parse(frame.subarray(headerBytes).toString("utf8")) as { event: unknown; seq: number }
      expect(body.seq).toBe(s.threadSeq)
      expect(body.event).toEqual(JSON.parse(JSON.stringify(s.event)))
    })
  })

  it("are the serialized frame for an event published without its stored JSON", () => {
    const stored: Array<StoredEvent> = [withRaw].map((event) => ({ seq: 9, threadSeq: 9, event }))
    const [run] = liveRunsOf(stored)
    expect(run!.frame(0).equals(expectedFrame(stored[0]!))).toBe(true)
  })

  it("are joined once for all followers up to JOINED_RUN_BYTES, a hot thread's held run of 150 small events included", () => {
    // A run as a server behind its stream fans out: 150 chunks of ~800 bytes (> 64 KiB, the bound
    // before, past which every follower took its frames corked, a write each).
    const chunk = { ...withRaw, raw: { source: "acp" as const, payload: { text: "x".repeat(700) } } }
    const runOf = (count: number) =>
      liveRunsOf(
        Array.from({ length: count }, (_, i) => ({
          seq: i + 1,
          threadSeq: i + 1,
          event: chunk,
          json: eventJsonOf(chunk)
        }))
      )[0]!
    const held = runOf(150)
    const joined = held.joined()
    expect(joined).toBeDefined()
    expect(joined!.length).toBeGreaterThan(64 * 1024)
    expect(joined!.equals(Buffer.concat(held.events.map((_, i) => held.frame(i))))).toBe(true)
    // Made once: every follower writes the same buffer.
    expect(held.joined()).toBe(joined)
    // Past the bound the frames go out as they are.
    const over = runOf(Math.ceil(JOINED_RUN_BYTES / joined!.length) * 150 + 1)
    expect(over.joined()).toBeUndefined()
  })
})
