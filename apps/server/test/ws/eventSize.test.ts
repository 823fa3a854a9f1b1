import { ThreadState, type RuntimeEvent, type ServerFrame, type ThreadSnapshot } from "@planbridge/contracts"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { startServer } from "../../src/http/HttpServer.ts"
import { boundEventSize, MAX_EVENT_BYTES } from "../../src/orchestration/EventSize.ts"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { connect } from "../support/wsClient.ts"

const dirs: Array<string> = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

const MiB = 1024 * 1024
const threadId = "thread-huge"
const base = (eventId: string) =>
  ({ eventId, provider: "cursor", threadId, turnId: "turn-1", createdAt: "2026-11-30T12:00:00.000Z" }) as const
/** A 16 MiB agent chunk with its 16 MiB native line as `raw`, as an ACP adapter would emit it. */
const hugeDelta = (text: string): RuntimeEvent =>
  ({
    ...base("delta-huge"),
    itemId: "item-1",
    type: "content.delta",
    payload: { streamKind: "assistant_text", delta: text },
    raw: { source: "acp.jsonrpc", method: "session/update", payload: { update: { content: { text } } } }
  }) as unknown as RuntimeEvent
const bytes = (event: RuntimeEvent) => Buffer.byteLength(JSON.stringify(event), "utf8")

describe("the event size bound", () => {
  it("splits a long delta and an item's long text losslessly; cuts raw and data to a stub", () => {
    const text = "é".repeat(4 * MiB) + "🙂".repeat(1000)
    const pieces = boundEventSize(hugeDelta(text))
    expect(pieces.length).toBeGreaterThan(1)
    expect(pieces.every((e) => bytes(e) <= MAX_EVENT_BYTES)).toBe(true)
    expect(pieces.map((e) => (e.type === "content.delta" ? e.payload.delta : "?")).join("")).toBe(text)
    expect(pieces.map((e) => e.eventId)).toEqual(pieces.map((_, i) => (i === 0 ? "delta-huge" : `delta-huge#${i}`)))
    const rawBytes = Buffer.byteLength(JSON.stringify({ update: { content: { text } } }), "utf8")
    expect(pieces[0]?.raw?.payload).toEqual({ "planbridge.truncated": { bytes: rawBytes, head: expect.any(String) } })
    expect(pieces.slice(1).every((e) => e.raw === undefined)).toBe(true)

    const completed = {
      ...base("done-1"),
      itemId: "item-2",
      type: "item.completed",
      payload: { itemType: "command", status: "failed", text, data: { output: text } }
    } as unknown as RuntimeEvent
    const split = boundEventSize(completed)
    expect(split.map((e) => e.type)).toEqual([
      "item.updated",
      ...split.slice(1, -1).map(() => "content.delta"),
      "item.completed"
    ])
    expect(split.every((e) => bytes(e) <= MAX_EVENT_BYTES)).toBe(true)
    expect(split.at(-1)).toMatchObject({ eventId: "done-1", payload: { status: "failed" } })
    // A client's fold of the pieces ends with the whole text.
    const state = ThreadState.empty(threadId, "cursor")
    split.forEach((e, i) => state.apply(i + 1, e))
    expect(state.toSnapshot().items.find((i) => i.itemId === "item-2")?.text).toBe(text)

    const plan = {
      ...base("plan-1"),
      type: "plan.proposed.completed",
      payload: { planId: "p", markdown: "x".repeat(2 * MiB) }
    }
    expect(boundEventSize(plan as unknown as RuntimeEvent)).toMatchObject([
      { type: "runtime.error", payload: { code: "event_too_large" } }
    ])
  })

  it("one 24 MiB event closes no subscriber: all ten receive the whole text", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "planbridge-event-size-"))
    dirs.push(dataDir)
    const server = await startServer({ dataDir, host: "127.0.0.1", port: 0, logLevel: "silent", providers: [] })
    const ingest = (events: ReadonlyArray<RuntimeEvent>) =>
      server.runtime.runPromise(
        Effect.gen(function* () {
          return yield* (yield* RuntimeIngestion).ingestAll(events)
        })
      )
    try {
      await ingest([
        { ...base("started"), type: "session.started", payload: { resumed: false } } as unknown as RuntimeEvent
      ])
      const clients = await Promise.all(
        Array.from({ length: 10 }, () => connect({ url: server.url, token: server.token }))
      )
      const closed: Array<number> = []
      for (const client of clients) {
        client.socket.on("close", (code) => closed.push(code))
        expect(
          (await client.command({ type: "thread.subscribe", threadId: threadId as never, afterSeq: 1 })).type
        ).toBe("result")
      }
      const text = "z".repeat(24 * MiB)
      // The turn goes on right after the chunk, as it does after a real agent's long message.
      const after = {
        ...base("completed"),
        type: "turn.completed",
        payload: { status: "completed" }
      } as unknown as RuntimeEvent
      const [, receipt] = await ingest([hugeDelta(text), after])
      const done = (f: ServerFrame): f is ServerFrame & { type: "event" } =>
        f.type === "event" && f.seq === receipt!.threadSeq
      await Promise.all(clients.map((c) => c.waitFor(done, 30_000)))
      expect(closed).toEqual([])
      for (const client of clients) {
        const deltas = client.frames.flatMap((f) =>
          f.type === "event" && f.event.type === "content.delta" ? [f.event.payload.delta] : []
        )
        expect(deltas.join("").length).toBe(text.length)
      }
      const res = await fetch(`${server.url}/api/threads/${threadId}`, {
        headers: { authorization: `Bearer ${server.token}` }
      })
      const snapshot = (await res.json()) as ThreadSnapshot
      expect(snapshot.items[0]?.text.length).toBe(text.length)
      await Promise.all(clients.map((c) => c.close()))
    } finally {
      await server.close()
    }
  })
})
