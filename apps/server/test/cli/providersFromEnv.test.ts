import { ThreadId } from "@planbridge/contracts"
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { claudeChecklistTools, providersFromEnv } from "../../src/cli/providersFromEnv.ts"
import { ServerStartError } from "../../src/http/HttpServer.ts"
import { makeAcpAdapter } from "../../src/provider/acp/AcpAdapter.ts"
import { cursorProfile } from "../../src/provider/acp/profiles/cursor.ts"
import { makeClaudeAdapter } from "../../src/provider/claude/ClaudeAdapter.ts"
import { claudeEnv } from "../../src/provider/claude/ClaudeProcess.ts"
import { makeCodexAdapter } from "../../src/provider/codex/CodexAdapter.ts"
import { lazyAdapter } from "../../src/provider/LazyAdapter.ts"
import type { ProviderAdapter } from "../../src/provider/ProviderAdapter.ts"

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

describe("provider adapters loaded by their first session", () => {
  /** What the server reads of an adapter before a session: it must be what the loaded adapter says. */
  const shapeOf = (adapter: ProviderAdapter) => ({
    provider: adapter.provider,
    home: adapter.homeFor?.("/threads/t1"),
    listsSessions: adapter.listSessions !== undefined
  })

  it("each offered adapter says, unloaded, what the loaded one says (both credentials modes)", () => {
    const isolated = providersFromEnv({ OPENAI_API_KEY: "k", ANTHROPIC_API_KEY: "k", CURSOR_API_KEY: "k" })
    expect(isolated.map((p) => shapeOf(p.adapter))).toEqual([
      shapeOf(makeCodexAdapter({ baseUrl: "http://x", envKey: "OPENAI_API_KEY", apiKey: "k", model: "m" })),
      shapeOf(makeClaudeAdapter({ baseUrl: "http://x", apiKey: "k" })),
      shapeOf(makeAcpAdapter(cursorProfile()))
    ])
    for (const userEnv of [
      { HOME: "/home/u" },
      { HOME: "/home/u", CODEX_HOME: "/opt/codex", CLAUDE_CONFIG_DIR: "/opt/claude" }
    ]) {
      const user = providersFromEnv({ ...userEnv, PATH: process.env.PATH }, "user").filter(
        (p) => p.adapter.provider !== "cursor"
      )
      expect(user.map((p) => p.adapter.provider)).toEqual(["codex", "claude"])
      expect(user.map((p) => shapeOf(p.adapter))).toEqual([
        shapeOf(makeCodexAdapter({ credentials: "user", userEnv })),
        shapeOf(makeClaudeAdapter({ credentials: "user", userEnv, checklistTools: "tasks" }))
      ])
    }
  })

  it("the module is imported by the first session only, once; a failed import fails that start and is tried again", async () => {
    let loads = 0
    let failNext = true
    const adapter = lazyAdapter({ provider: "codex", listsSessions: false }, async () => {
      loads++
      if (failNext) {
        failNext = false
        throw new Error("chunk missing")
      }
      return {
        provider: "codex",
        // The loaded adapter's own start: here, a failure that names the thread.
        startSession: (input) => Effect.die(`started ${input.threadId}`)
      }
    })
    expect(loads).toBe(0)
    const start = (threadId: string) =>
      Effect.runPromiseExit(
        Effect.scoped(
          adapter.startSession({
            threadId: ThreadId.make(threadId),
            cwd: "/",
            mode: "default",
            emit: () => Effect.void
          })
        )
      )
    const failed = await start("t1")
    expect(Exit.isFailure(failed) && String(failed.cause)).toContain("loading the codex adapter: chunk missing")
    expect(loads).toBe(1)
    for (const threadId of ["t2", "t3"]) {
      const exit = await start(threadId)
      expect(Exit.isFailure(exit) && String(exit.cause)).toContain(`started ${threadId}`)
    }
    expect(loads).toBe(2)
  })
})
