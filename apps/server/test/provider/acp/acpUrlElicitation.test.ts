import { ThreadId, URL_OPEN_OPTION_ID, URL_QUESTION_ID } from "@planbridge/contracts"
import { resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAcpAdapter } from "../../../src/provider/acp/AcpAdapter.ts"
import { cursorProfile } from "../../../src/provider/acp/profiles/cursor.ts"
import { openSession, recording, replayOfLive, run, type OpenSession } from "./harness.ts"

/**
 * Issue 28: ACP `elicitation/create` in URL mode and `elicitation/complete`, against the
 * project's scripted ACP agent (a child process over stdio, the SDK's agent side): the client is
 * given the URL as a URL prompt; opening it answers the agent `accept` while the prompt stays
 * pending; the agent's `elicitation/complete` resolves it `answered`. A decline reaches the agent
 * as `decline`; a URL that is no web address is refused with a warning and never shown.
 */

const root = resolve(import.meta.dirname, "../../../../..")
const profile = cursorProfile({
  command: resolve(root, "node_modules/.bin/tsx"),
  args: [resolve(import.meta.dirname, "scriptedCursorAgent.ts")]
})
const env = { PATH: process.env.PATH, HOME: process.env.HOME, CURSOR_API_KEY: "test-key" }
const threadId = ThreadId.make("thread-acp-url-28")
const { recorder, options } = recording("cursor", threadId)
const adapter = makeAcpAdapter(profile, { env, ...options })

describe("ACP URL-mode elicitation (scripted agent)", () => {
  let open: OpenSession
  beforeAll(async () => {
    open = await openSession(adapter, { threadId, cwd: root, mode: "default" })
  })
  afterAll(async () => {
    await open?.close()
  })

  it("the URL prompt: opened as accept, resolved when the agent says the flow completed", async () => {
    const { log, session } = open
    const from = log.events.length
    const turnId = await run(session.startTurn({ text: "SCENARIO:ELICIT_URL" }))
    const asked = await log.waitFor("user-input.requested", () => true, { from })
    const prompt = asked.payload.prompt
    expect(prompt.url).toEqual({ url: "https://login.example.test/acp?code=28", elicitationId: "acp-login-28" })
    expect(prompt.questions.map((q) => [q.id, q.label, q.options.map((o) => o.id)])).toEqual([
      [URL_QUESTION_ID, "Log in to the fixture service", [URL_OPEN_OPTION_ID]]
    ])
    await run(
      session.respondToUserInput({
        promptId: prompt.promptId,
        answers: [{ questionId: URL_QUESTION_ID, selectedOptionIds: [URL_OPEN_OPTION_ID] }]
      })
    )
    await log.waitFor("turn.completed", (e) => e.turnId === turnId)
    expect(log.assistantText(turnId)).toContain('RECEIVED elicitation/create {"action":"accept"}')
    const events = log.events.slice(from)
    const at = (match: (e: (typeof events)[number]) => boolean) => events.findIndex(match)
    const requestResolved = at((e) => e.type === "request.resolved")
    const agentGotIt = at((e) => e.type === "content.delta" && e.payload.delta.startsWith("RECEIVED elicitation"))
    const promptResolved = at((e) => e.type === "user-input.resolved")
    // The answer went out first; the prompt waited for the agent's elicitation/complete.
    expect(events[requestResolved]?.payload).toMatchObject({ resolution: "responded" })
    expect(requestResolved).toBeLessThan(agentGotIt)
    expect(agentGotIt).toBeLessThan(promptResolved)
    expect(events[promptResolved]?.raw?.method).toBe("elicitation/complete")
    expect(events[promptResolved]?.payload).toMatchObject({
      promptId: prompt.promptId,
      resolution: "answered",
      answers: [{ questionId: URL_QUESTION_ID, selectedOptionIds: [URL_OPEN_OPTION_ID] }]
    })
    // Nothing waits on the opened prompt: the session went back to running, then idle.
    expect(events.filter((e) => e.type === "session.state.changed").at(-1)?.payload.state).toBe("idle")
  })

  it("a declined URL prompt reaches the agent as decline and resolves empty at once", async () => {
    const { log, session } = open
    const from = log.events.length
    const turnId = await run(session.startTurn({ text: "SCENARIO:ELICIT_URL" }))
    const asked = await log.waitFor("user-input.requested", () => true, { from })
    await run(session.dismissUserInput(asked.payload.prompt.promptId, "empty"))
    await log.waitFor("turn.completed", (e) => e.turnId === turnId)
    expect(log.assistantText(turnId)).toContain('RECEIVED elicitation/create {"action":"decline"}')
    expect(log.events.slice(from).find((e) => e.type === "user-input.resolved")?.payload.resolution).toBe("empty")
  })

  it("a URL that is no web address is refused with a visible warning and never shown", async () => {
    const { log, session } = open
    const from = log.events.length
    const turnId = await run(session.startTurn({ text: "SCENARIO:ELICIT_BAD_URL" }))
    await log.waitFor("turn.completed", (e) => e.turnId === turnId)
    const events = log.events.slice(from)
    expect(events.filter((e) => e.type === "user-input.requested")).toEqual([])
    const warning = events.find((e) => e.type === "runtime.warning")
    expect(warning?.payload).toMatchObject({
      code: "request_invalid",
      message: expect.stringContaining("an http(s) URL")
    })
    expect(log.assistantText(turnId)).toContain('RECEIVED elicitation/create {"action":"decline"}')
  })

  it("replays to the same events", async () => {
    const { live, replayed } = await replayOfLive(recorder, open.log, threadId)
    expect(replayed).toEqual(live)
  })
})
