import type { ServerFrame } from "@planbridge/contracts"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type RunningServer } from "../../src/http/HttpServer.ts"
import { makeClaudeAdapter } from "../../src/provider/claude/ClaudeAdapter.ts"
import { CLAUDE_CAPABILITIES } from "../../src/provider/claude/ClaudeModes.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import {
  lastToolResults,
  startMockMessagesModel,
  toolResultText,
  withoutSystemReminders,
  type MockMessagesModel
} from "../support/mockMessagesModel.ts"
import { GREETING_PLAN, GREETING_STYLE, greetingPlanTurn } from "../provider/claude/greetingPlan.ts"
import { connect, isEvent } from "../support/wsClient.ts"

/**
 * The server with the real Claude Agent SDK and CLI (model scripted on loopback): a client
 * drives a plan-mode session over WebSocket, answers AskUserQuestion, and approves the
 * ExitPlanMode plan with `plan.decide`; the session leaves plan mode.
 */
let mock: MockMessagesModel
let server: RunningServer
const dirs: Array<string> = []
const started = Date.now()

beforeAll(async () => {
  assertLoopbackOnly()
  const dataDir = mkdtempSync(join(tmpdir(), "planbridge-e2e-claude-"))
  dirs.push(dataDir)
  mock = await startMockMessagesModel()
  server = await startServer({
    dataDir,
    host: "127.0.0.1",
    port: 0,
    logLevel: "silent",
    providers: [{ adapter: makeClaudeAdapter({ baseUrl: mock.baseUrl }), capabilities: CLAUDE_CAPABILITIES }]
  })
})

afterAll(async () => {
  await server?.close()
  await mock?.close()
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
  console.info(`server.claude.real.test.ts wall time: ${Date.now() - started} ms`)
})

describe("server end to end with the real Claude Agent SDK", () => {
  it("a plan-mode session: the question answered and the plan approved over WebSocket", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "planbridge-e2e-claude-cwd-"))
    dirs.push(cwd)
    const client = await connect({ url: server.url, token: server.token })
    try {
      const welcome = client.frames.find((f) => f.type === "welcome")
      expect(welcome?.type === "welcome" && welcome.providers).toEqual([
        { provider: "claude", capabilities: CLAUDE_CAPABILITIES }
      ])
      mock.script(...greetingPlanTurn())
      const start = await client.command({ type: "session.start", provider: "claude", cwd, mode: "plan" })
      if (start.type !== "result") throw new Error(JSON.stringify(start))
      const { threadId } = start.result as { threadId: string }
      expect((await client.command({ type: "thread.subscribe", threadId: threadId as never })).type).toBe("result")
      expect(
        (await client.command({ type: "turn.start", threadId: threadId as never, text: "Plan a tiny greeting CLI" }))
          .type
      ).toBe("result")

      const requested = await client.waitFor(isEvent("user-input.requested", threadId))
      if (requested.event.type !== "user-input.requested") throw new Error("unreachable")
      const question = requested.event.payload.prompt.questions[0]!
      const casual = question.options.find((o) => o.label === "Casual")!.id
      const answered = await client.command({
        type: "userInput.respond",
        promptId: requested.event.payload.prompt.promptId,
        answers: [{ questionId: question.id, selectedOptionIds: [casual] }],
        clientRequestId: "claude-answer-1"
      })
      expect(answered.type).toBe("result")
      const [, second] = await mock.waitForMainRequests(2)
      expect(withoutSystemReminders(toolResultText(lastToolResults(second!.body)[0]!))).toContain(
        `"${GREETING_STYLE}"="Casual"`
      )

      const proposed = await client.waitFor(isEvent("plan.proposed.completed", threadId))
      if (proposed.event.type !== "plan.proposed.completed") throw new Error("unreachable")
      expect(proposed.event.payload.markdown).toBe(GREETING_PLAN)
      expect(readFileSync(proposed.event.payload.filePath!, "utf8")).toBe(GREETING_PLAN)
      const decided = await client.command({
        type: "plan.decide",
        threadId: threadId as never,
        planId: proposed.event.payload.planId,
        decision: "approved",
        clientRequestId: "claude-plan-1"
      })
      expect(decided.type).toBe("result")
      const mode = await client.waitFor(
        (f): f is ServerFrame & { type: "event" } => isEvent("mode.changed", threadId)(f) && f.seq > proposed.seq
      )
      expect(mode.event.type === "mode.changed" && mode.event.payload.mode).toBe("default")
      await client.waitFor(
        (f): f is ServerFrame & { type: "event" } => isEvent("turn.completed", threadId)(f) && f.seq > proposed.seq
      )

      // What the server holds: the approved plan, the answered prompt, the session in default mode.
      const res = await fetch(`${server.url}/api/threads/${threadId}`, {
        headers: { authorization: `Bearer ${server.token}` }
      })
      const snapshot = (await res.json()) as {
        mode: string
        proposedPlans: Array<{ status: string; markdown: string }>
        prompts: Array<{ resolution: string }>
      }
      expect(snapshot.mode).toBe("default")
      expect(snapshot.proposedPlans.map((p) => [p.status, p.markdown])).toEqual([["approved", GREETING_PLAN]])
      expect(snapshot.prompts.map((p) => p.resolution)).toEqual(["answered"])
    } finally {
      await client.close()
    }
  })
})
