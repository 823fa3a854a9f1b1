// A vitest test against a recorded Claude plan-mode session: a question, a proposed plan, its
// approval. No provider program, no login: `planbridge serve --replay` plays the recording.
//   PLANBRIDGE_REPLAY_DIR=path/to/fixtures npx vitest run recorded-session.test.mjs
import { connectReplay, startRecordedSession, startReplayServer } from "@planbridge/testkit"
import { afterAll, beforeAll, expect, test } from "vitest"

const dir = process.env.PLANBRIDGE_REPLAY_DIR ?? new URL("../../../fixtures/", import.meta.url).pathname
let server
let client

beforeAll(async () => {
  server = await startReplayServer({ dir })
  client = await connectReplay(server)
})
afterAll(async () => {
  client?.close()
  await server?.close()
})

test("the question is answered and the plan approved", async () => {
  const thread = await startRecordedSession(client, "claude-plan-session")
  await thread.send("Plan a tiny greeting CLI")

  const prompt = await thread.waitForPrompt()
  expect(prompt.prompt.questions.map((q) => q.label)).toEqual(["Which style?", "Which extras?"])
  await thread.choose(prompt, ["Casual"], ["Colors", "Emoji"])

  const plan = await thread.waitForPlan()
  expect(plan.markdown).toContain("# Plan: greeting CLI")
  await thread.decidePlan(plan, "approved")

  expect((await thread.waitForTurnEnd()).status).toBe("completed")
  // Answered as recorded: the replay had nothing to warn about.
  expect(thread.events.filter((e) => e.type === "runtime.warning")).toEqual([])
})
