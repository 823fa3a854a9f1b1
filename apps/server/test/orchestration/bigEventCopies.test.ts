import type { RuntimeEvent } from "@planbridge/contracts"
import { Effect } from "effect"
import { afterEach, describe, expect, it, vi } from "vitest"
import { boundEventJson, MAX_EVENT_BYTES } from "../../src/orchestration/EventSize.ts"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { Database } from "../../src/persistence/Database.ts"
import { CHUNK_CHARS } from "../../src/persistence/ItemProjection.ts"
import { readThreadSnapshot } from "../../src/persistence/ThreadSnapshots.ts"
import { runWithIngestion, tempDir } from "../support/ingestionRuntime.ts"

const cleanups: Array<() => void> = []
afterEach(() => {
  vi.restoreAllMocks()
  cleanups.splice(0).forEach((f) => f())
})

const MiB = 1024 * 1024
const threadId = "thread-big"
const base = (eventId: string) =>
  ({ eventId, provider: "cursor", threadId, turnId: "turn-1", createdAt: "2026-12-02T12:00:00.000Z" }) as const

/**
 * What one huge agent line costs the server (issue 31, item 5): its peak memory grew by ~780 MB
 * for one 20 MiB line. Two of the copies are checked here, where they were made.
 */
describe("one huge event", () => {
  it("is bounded without being serialized whole: what JSON.stringify makes stays near the text's size", () => {
    const text = "x".repeat(20 * MiB)
    // As an ACP adapter emits it: the text, and the native line (holding it again) as `raw`.
    const event = {
      ...base("delta-big"),
      itemId: "item-1",
      type: "content.delta",
      payload: { streamKind: "assistant_text", delta: text },
      raw: { source: "acp.jsonrpc", method: "session/update", payload: { update: { content: { text } } } }
    } as unknown as RuntimeEvent
    const stringify = JSON.stringify
    let serialized = 0
    vi.spyOn(JSON, "stringify").mockImplementation((...args: Parameters<typeof JSON.stringify>) => {
      const out = stringify(...args)
      serialized += out.length
      return out
    })
    const pieces = boundEventJson(event)
    vi.restoreAllMocks()
    expect(pieces.map((p) => (p.event.type === "content.delta" ? p.event.payload.delta : "")).join("")).toBe(text)
    expect(pieces.every((p) => Buffer.byteLength(stringify(p.event), "utf8") <= MAX_EVENT_BYTES)).toBe(true)
    // The pieces' own JSON (the text once) and the raw stub's measure (the native line once);
    // it was 5 serializations of the whole event or its raw (~120 MiB) before.
    expect(serialized).toBeLessThan(2.2 * text.length)
  })

  it("is stored as chunks of at most CHUNK_CHARS, and reads back whole", async () => {
    const t = tempDir("big-event")
    cleanups.push(t.cleanup)
    const text = "a".repeat(3 * MiB) + "é".repeat(MiB)
    const final = "b".repeat(3 * MiB)
    const result = await runWithIngestion(
      `${t.dir}/planbridge.db`,
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        const item = { ...base(""), itemId: "item-1" }
        yield* ingestion.ingest({
          ...item,
          eventId: "started",
          type: "item.started",
          payload: { itemType: "assistant_message", status: "inProgress" }
        })
        yield* ingestion.ingest({
          ...item,
          eventId: "delta",
          type: "content.delta",
          payload: { streamKind: "assistant_text", delta: text }
        })
        const { db } = yield* Database
        const chunks = () =>
          db.$client.prepare("select length(text) as n from item_text_chunks order by first_seq").all() as Array<{
            n: number
          }>
        const streamed = { text: readThreadSnapshot(db, threadId)?.items[0]?.text ?? "", chunks: chunks() }
        yield* ingestion.ingest({
          ...item,
          eventId: "completed",
          type: "item.completed",
          payload: { itemType: "assistant_message", status: "completed", text: final }
        })
        const row = db.$client.prepare("select length(text) as n from items").get() as { n: number }
        const completed = { text: readThreadSnapshot(db, threadId)?.items[0]?.text ?? "", chunks: chunks(), row }
        return { streamed, completed }
      })
    )
    expect(result.streamed.text).toBe(text)
    expect(result.streamed.chunks.length).toBeGreaterThan(1)
    expect(result.streamed.chunks.every((c) => c.n <= CHUNK_CHARS)).toBe(true)
    expect(result.completed.text).toBe(final)
    // The completion's text replaced the stream; its row keeps only its first piece.
    expect(result.completed.row.n).toBeLessThanOrEqual(CHUNK_CHARS)
    expect(result.completed.chunks.every((c) => c.n <= CHUNK_CHARS)).toBe(true)
  })
})
