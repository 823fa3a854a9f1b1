import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import { runAnswerIntegrity, startIntegrityRig, type IntegrityRig } from "./answerIntegrity.ts"

/**
 * Answer integrity on the real Claude Agent SDK 0.3.333 (CLI 2.1.333) behind a real server:
 * over many turns, every prompt recorded `answered` reached the model with exactly the recorded
 * answers, and no prompt was cancelled by the server on its own. `npm run stress` runs the same
 * with more iterations.
 */
const ITERATIONS = 20

let rig: IntegrityRig
const started = Date.now()

beforeAll(async () => {
  assertLoopbackOnly()
  rig = await startIntegrityRig()
})
afterAll(async () => {
  await rig?.close()
  console.log(`claude answer integrity: ${Date.now() - started} ms`)
})

describe("Claude answer integrity on the real SDK, over WebSocket", () => {
  it.each(["four-questions", "two-tool-uses"] as const)(
    "%s: what is recorded is what the model got",
    async (scenario) => {
      const report = await runAnswerIntegrity(rig, scenario, ITERATIONS)
      expect(report.mismatches).toEqual([])
      expect(report.selfCancellations).toBe(0)
      expect(report.refusedAnswers).toBe(0)
      expect(report.answered).toBe(report.prompts)
      expect(report.prompts).toBe(ITERATIONS * (scenario === "four-questions" ? 1 : 2))
    }
  )
})
