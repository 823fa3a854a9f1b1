import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { Database } from "../../src/persistence/Database.ts"
import { readThreadSnapshot } from "../../src/persistence/ThreadSnapshots.ts"
import { runWithIngestion, tempDir } from "../support/ingestionRuntime.ts"

const cleanups: Array<() => void> = []
afterEach(() => cleanups.splice(0).forEach((f) => f()))

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/**
 * A long streamed message must not make each further delta dearer: a delta used to rewrite the
 * item's whole text in the projection (quadratic over a message). Each delta here is its own
 * ingestion batch, as when an adapter waits for every event to be durable.
 */
describe("streamed item text", () => {
  it("costs the same per delta at 8 MB as at the start of the message, and reads back whole", async () => {
    const t = tempDir("delta-cost")
    cleanups.push(t.cleanup)
    const threadId = "thread-delta-cost"
    const turnId = "turn-1"
    const itemId = "item-1"
    let n = 0
    const event = (type: string, payload: Record<string, unknown>) => ({
      eventId: `e${n++}`,
      provider: "codex",
      threadId,
      turnId,
      itemId,
      createdAt: new Date(Date.UTC(2026, 10, 30) + n).toISOString(),
      type,
      payload
    })
    const delta = (text: string) => event("content.delta", { streamKind: "assistant_text", delta: text })
    const small = "x".repeat(40)
    const big = "y".repeat(1024 * 1024)

    const result = await runWithIngestion(
      `${t.dir}/planbridge.db`,
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        const timed = (count: number) =>
          Effect.gen(function* () {
            const times: Array<number> = []
            for (let i = 0; i < count; i++) {
              const started = performance.now()
              yield* ingestion.ingest(delta(small))
              times.push(performance.now() - started)
            }
            return median(times)
          })
        yield* ingestion.ingest(event("item.started", { itemType: "assistant_message", status: "inProgress" }))
        yield* timed(50) // warm-up
        const early = yield* timed(200)
        for (let i = 0; i < 8; i++) yield* ingestion.ingest(delta(big))
        const late = yield* timed(200)
        const { db } = yield* Database
        const snapshot = readThreadSnapshot(db, threadId)
        return { early, late, text: snapshot?.items[0]?.text ?? "" }
      })
    )
    expect(result.text).toBe(small.repeat(250) + big.repeat(8) + small.repeat(200))
    // Rewriting an 8 MB row per delta made `late` ~100× `early`; a constant cost keeps them close.
    expect(result.late).toBeLessThan(Math.max(result.early * 4, result.early + 1))
  })
})
