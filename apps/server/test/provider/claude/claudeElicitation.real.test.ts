import type { OptionId, QuestionId } from "@planbridge/contracts"
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
 * the answer reaches the MCP server exactly as given.
 */

let h: ClaudeHarness
let outDir: string
const out = () => join(outDir, "received.jsonl")

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
    const received = readFileSync(out(), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as unknown)
    expect(received).toEqual([
      { tool: "ask_form", result: { action: "accept", content: { name: "ada", token: "tok-28" } } }
    ])
  })
})
