import type { RuntimeEvent, ThreadId } from "@planbridge/contracts"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import { EmitError } from "../../../src/provider/ProviderAdapter.ts"
import { codexReplayMapping } from "../../../src/provider/codex/CodexReplay.ts"
import { replay } from "../../../src/provider/kernel/replay.ts"
import { withCodexHarness } from "./harness.ts"
import { ofType, PLAN_MARKDOWN, planReply, transcriptOf, withoutEnvelope } from "./realPeerSupport.ts"

/**
 * The Codex session records what the app-server wrote in one go (a streamed plan: ~25
 * notifications within a millisecond) with one `emitAll`, i.e. one transaction, instead of one
 * commit per event; the events and their order are those of mapping the lines one by one (the
 * replay of the transcript). When the burst cannot be recorded at once, each event goes alone,
 * and one that cannot be recorded is named. Real `codex app-server` 0.171.0, scripted model.
 */

beforeAll(() => assertLoopbackOnly())
const started = Date.now()
afterAll(() => {
  console.info(`codexBursts.real.test.ts wall time: ${Date.now() - started} ms`)
})

const planTurn = (threadId: string) => ({ mode: "plan" as const, threadId: threadId as ThreadId })

describe("Codex bursts on the real app-server", () => {
  it("a streamed plan is recorded in bursts, in the order of the lines", async () => {
    await withCodexHarness(planTurn("thread-bursts"), (h) =>
      Effect.gen(function* () {
        h.mock.script({ output: [planReply] })
        yield* h.session.startTurn({ text: "Plan a small HTTP service." })
        yield* h.waitForEvent("turn.completed")
        expect(ofType(h.events, "plan.proposed.completed").map((e) => e.payload.markdown)).toEqual([PLAN_MARKDOWN])
        // The deltas came in bursts: at least one record carried several events.
        expect(Math.max(...h.batches)).toBeGreaterThan(1)
        expect(h.batches.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(h.events.length)
        const replayed = yield* replay(codexReplayMapping, transcriptOf(h, "plan"), {
          threadId: "thread-bursts" as ThreadId
        })
        expect(withoutEnvelope(h.events)).toEqual(withoutEnvelope(replayed))
      })
    )
  })

  it("a burst that cannot be recorded at once goes event by event; an event that fails is named", async () => {
    const emitAll = () => Effect.fail(new EmitError({ cause: new Error("the batch is refused") }))
    const emit = (event: RuntimeEvent) =>
      event.type === "plan.proposed.completed"
        ? Effect.fail(new EmitError({ cause: new Error("disk full") }))
        : Effect.void
    await withCodexHarness({ ...planTurn("thread-fallback"), emit, emitAll }, (h) =>
      Effect.gen(function* () {
        h.mock.script({ output: [planReply] })
        yield* h.session.startTurn({ text: "Plan a small HTTP service." })
        yield* h.waitForEvent("turn.completed")
        expect(h.batches).toEqual([])
        const failed = ofType(h.events, "runtime.error").filter((e) => e.payload.code === "codex.emit_failed")
        expect(failed.map((e) => e.payload.message)).toEqual([
          expect.stringContaining("could not record plan.proposed.completed")
        ])
        // Everything else is recorded, in the order of the lines.
        const replayed = yield* replay(codexReplayMapping, transcriptOf(h, "plan"), {
          threadId: "thread-fallback" as ThreadId
        })
        const expected = replayed.filter((e) => e.type !== "plan.proposed.completed")
        expect(withoutEnvelope(h.events.filter((e) => e.type !== "runtime.error"))).toEqual(withoutEnvelope(expected))
      })
    )
  })
})
