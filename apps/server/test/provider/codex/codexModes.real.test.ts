import type { ThreadId } from "@planbridge/contracts"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import { startCodexHarness, withCodexHarness } from "./harness.ts"
import { expectAdapterError, ofType, planReply } from "./realPeerSupport.ts"

/**
 * Modes on the real `codex app-server` 0.171.0, at the adapter: a session never starts in a mode
 * Codex lacks, and a switch is refused while a turn runs, also in the moment between the
 * `turn/start` response and `turn/started`, where the projection does not know the turn yet.
 */

beforeAll(() => assertLoopbackOnly())
const started = Date.now()
afterAll(() => {
  console.info(`codexModes.real.test.ts wall time: ${Date.now() - started} ms`)
})

describe("Codex modes on the real app-server", () => {
  it("a mode switch is refused busy from the turn/start response on, and accepted once the turn ended", async () => {
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    await withCodexHarness({ mode: "plan", threadId: "thread-modes" as ThreadId }, (h) =>
      Effect.gen(function* () {
        h.mock.script({ output: [planReply], gate })
        yield* h.session.startTurn({ text: "Plan a small HTTP service for me." })
        // No waiting for turn/started: the turn is running from Codex's answer to turn/start.
        yield* Effect.promise(() => expectAdapterError(h.session.setMode("default"), "busy"))
        const steer = h.session.startTurn({ text: "Just do it.", mode: "default" })
        yield* Effect.promise(() => expectAdapterError(steer, "busy"))
        yield* h.session.setMode("plan")
        release()
        yield* h.waitForEvent("turn.completed")
        expect(ofType(h.events, "mode.changed")).toEqual([])
        yield* h.session.setMode("default")
        const changed = ofType(h.events, "mode.changed").map((e) => e.payload)
        expect(changed).toEqual([{ mode: "default", nativeMode: "default" }])
        expect(yield* h.session.mode).toBe("default")
      })
    )
  })

  it("a session is not started in a mode Codex lacks", async () => {
    for (const mode of ["ask", "execute", "unknown"] as const) {
      const error = await Effect.runPromise(Effect.flip(Effect.scoped(startCodexHarness({ mode }))))
      const message = `Codex has no '${mode}' mode (plan and default only)`
      expect(error).toMatchObject({ kind: "unsupported", message })
    }
  })
})
