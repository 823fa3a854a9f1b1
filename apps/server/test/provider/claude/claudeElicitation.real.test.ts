import { URL_OPEN_OPTION_ID, URL_QUESTION_ID, type OptionId, type QuestionId } from "@planbridge/contracts"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import { startClaudeHarness, type ClaudeHarness } from "./harness.ts"

/**
 * Issue 28: the Agent SDK's `onElicitation` wired to canonical prompts. The real Claude Code CLI
 * (Agent SDK 0.3.332, its model scripted on loopback) runs the test's stdio MCP server
 * (`support/mcpElicitingServer.mjs`); its tool elicits a form, which becomes a question card, and
 * the answer reaches the MCP server exactly as given; its other tool elicits a URL, whose prompt
 * stays pending after it was opened until the MCP server says the flow completed.
 */

let h: ClaudeHarness
let outDir: string
const out = () => join(outDir, "received.jsonl")
const received = () =>
  readFileSync(out(), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as unknown)

beforeAll(async () => {
  assertLoopbackOnly()
  outDir = mkdtempSync(join(tmpdir(), "planbridge-claude-mcp-"))
  h = await startClaudeHarness({
    mode: "default",
    mcpServers: {
      elicit: {
        command: process.execPath,
        args: [join(import.meta.dirname, "../../support/mcpElicitingServer.mjs")],
        env: { PLANBRIDGE_MCP_OUT: out() }
      }
    }
  })
}, 60_000)
afterAll(async () => {
  await h?.close()
  rmSync(outDir, { recursive: true, force: true })
})

describe("Claude: an MCP server's elicitation becomes a question card", () => {
  it("a form: its fields as questions, the answers reach the MCP server as given", async () => {
    h.mock.script(
      { blocks: [{ type: "tool_use", name: "mcp__elicit__ask_form", input: {} }] },
      { blocks: [{ type: "text", text: "Connected." }] }
    )
    const turnId = await h.run(h.session.startTurn({ text: "Connect the service." }))
    // Claude Code asks before it runs an MCP tool: allowed.
    const approval = await h.waitFor("request.opened", { where: (e) => e.payload.requestKind === "approval" })
    await h.run(h.session.respondToRequest(approval.payload.requestId, "allow" as OptionId))
    const asked = await h.waitFor("user-input.requested")
    const prompt = asked.payload.prompt
    expect(prompt.description).toBe("Connect the fixture service")
    expect(prompt.questions.map((q) => [q.id, q.label, q.allowFreeform, q.required])).toEqual([
      ["name", "Account name", true, true],
      ["token", "API token", true, true]
    ])
    expect(asked.raw?.method).toBe("elicitation")
    await h.run(
      h.session.respondToUserInput({
        promptId: prompt.promptId,
        answers: [
          { questionId: "name" as QuestionId, text: "ada" },
          { questionId: "token" as QuestionId, text: "tok-28" }
        ]
      })
    )
    const resolved = await h.waitFor("user-input.resolved")
    expect(resolved.payload).toMatchObject({ promptId: prompt.promptId, resolution: "answered" })
    await h.waitFor("turn.completed", { where: (e) => e.turnId === turnId, timeoutMs: 60_000 })
    expect(received()).toEqual([
      { tool: "ask_form", result: { action: "accept", content: { name: "ada", token: "tok-28" } } }
    ])
  })
  it("a URL: opened, the prompt pending until the MCP server says the flow completed, then resolved", async () => {
    const from = h.events.length
    h.mock.script(
      { blocks: [{ type: "tool_use", name: "mcp__elicit__ask_url", input: {} }] },
      { blocks: [{ type: "text", text: "Logged in." }] }
    )
    const turnId = await h.run(h.session.startTurn({ text: "Log in to the service." }))
    const approval = await h.waitFor("request.opened", {
      after: from,
      where: (e) => e.payload.requestKind === "approval"
    })
    await h.run(h.session.respondToRequest(approval.payload.requestId, "allow" as OptionId))
    const asked = await h.waitFor("user-input.requested", { after: from })
    const prompt = asked.payload.prompt
    expect(prompt.url).toEqual({ url: "https://login.example.test/device?code=PB-28", elicitationId: "login-28" })
    await h.run(
      h.session.respondToUserInput({
        promptId: prompt.promptId,
        answers: [{ questionId: URL_QUESTION_ID, selectedOptionIds: [URL_OPEN_OPTION_ID] }]
      })
    )
    const opened = await h.waitFor("request.resolved", {
      after: from,
      where: (e) => e.payload.requestId === asked.payload.requestId
    })
    expect(opened.payload.resolution).toBe("responded")
    const resolved = await h.waitFor("user-input.resolved", {
      after: from,
      where: (e) => e.payload.promptId === prompt.promptId
    })
    // Pending while the page was open: resolved by Claude Code's completion message, not by the answer.
    expect(h.events.indexOf(resolved)).toBeGreaterThan(h.events.indexOf(opened))
    expect(resolved.raw?.method).toBe("system/elicitation_complete")
    expect(resolved.payload).toMatchObject({ resolution: "answered" })
    await h.waitFor("turn.completed", { after: from, where: (e) => e.turnId === turnId, timeoutMs: 60_000 })
    expect(received()).toContainEqual({ tool: "ask_url", result: { action: "accept" } })
  })
})
