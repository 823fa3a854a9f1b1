import { describe, expect, it } from "vitest"
import { claudeChecklistTools, providersFromEnv } from "../../src/cli/providersFromEnv.ts"
import { ServerStartError } from "../../src/http/HttpServer.ts"
import { claudeEnv } from "../../src/provider/claude/ClaudeProcess.ts"

describe("providers offered by planbridge serve", () => {
  it("offers exactly the providers whose credentials are configured, with their capabilities", () => {
    expect(providersFromEnv({})).toEqual([])
    const all = providersFromEnv({ OPENAI_API_KEY: "k", ANTHROPIC_API_KEY: "k", CURSOR_API_KEY: "k" })
    expect(all.map((p) => p.adapter.provider)).toEqual(["codex", "claude", "cursor"])
    expect(all.map((p) => p.capabilities.supportsAskMode)).toEqual([false, false, true])
    expect(providersFromEnv({ OPENAI_API_KEY: "" })).toEqual([])
  })

  it("PLANBRIDGE_CLAUDE_CHECKLIST picks Claude's checklist tools; anything else is refused by name", () => {
    expect([undefined, "", "tasks", "todowrite"].map(claudeChecklistTools)).toEqual([
      "tasks",
      "tasks",
      "tasks",
      "todowrite"
    ])
    expect(() => providersFromEnv({ ANTHROPIC_API_KEY: "k", PLANBRIDGE_CLAUDE_CHECKLIST: "TodoWrite" })).toThrow(
      ServerStartError
    )
    expect(() => claudeChecklistTools("todo")).toThrow(
      "PLANBRIDGE_CLAUDE_CHECKLIST must be 'tasks' or 'todowrite', not 'todo'"
    )
    const env = (checklistTools?: "tasks" | "todowrite") =>
      claudeEnv({ home: "/h", baseUrl: "http://x", apiKey: "k", ...(checklistTools ? { checklistTools } : {}) })
    expect([
      env().CLAUDE_CODE_ENABLE_TASKS,
      env("tasks").CLAUDE_CODE_ENABLE_TASKS,
      env("todowrite").CLAUDE_CODE_ENABLE_TASKS
    ]).toEqual([undefined, undefined, "0"])
  })
})
