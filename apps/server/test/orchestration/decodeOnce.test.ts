import type { RuntimeEvent } from "@planbridge/contracts"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { stampDraft, type EventDraft } from "../../src/provider/kernel/EventDraft.ts"
import { runWithIngestion, tempDir } from "../support/ingestionRuntime.ts"

const cleanups: Array<() => void> = []
afterEach(() => cleanups.splice(0).forEach((f) => f()))

const stamp = (eventId: string) => ({
  eventId,
  provider: "cursor" as const,
  threadId: "thread-once" as RuntimeEvent["threadId"],
  createdAt: "2026-12-06T12:00:00.000Z"
})
const delta: EventDraft = {
  type: "content.delta",
  turnId: "turn-1" as never,
  itemId: "item-1" as never,
  payload: { streamKind: "assistant_text", delta: "hello" },
  raw: { source: "acp", method: "session/update", payload: null }
}

/**
 * Issue 26: every event a session emits was decoded twice, when its draft was stamped and again
 * at ingestion. A stamped event now goes to the log as it is. Observed here by what only a second
 * decode would catch: a stamped event broken in place after stamping (which no server code does)
 * is stored as it is, while the same break in a new object (what every server-side change of an
 * event makes) is still refused at ingestion.
 */
describe("an event is decoded once", () => {
  const ingestBroken = (copy: boolean) => {
    const t = tempDir("decode-once")
    cleanups.push(t.cleanup)
    const stamped = stampDraft(delta, stamp(copy ? "e-copy" : "e-same"))
    const event = (copy ? { ...stamped, payload: { ...stamped.payload } } : stamped) as {
      payload: { delta: unknown }
    }
    event.payload.delta = 42
    return runWithIngestion(
      `${t.dir}/planbridge.db`,
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        return yield* Effect.result(ingestion.ingest(event))
      })
    )
  }

  it("a stamped event is not decoded again at ingestion", async () => {
    const result = await ingestBroken(false)
    expect(result._tag).toBe("Success")
  })

  it("a new object made from a stamped event is decoded at ingestion", async () => {
    const result = await ingestBroken(true)
    expect(result._tag).toBe("Failure")
    expect(JSON.stringify(result)).toContain("delta")
  })
})
