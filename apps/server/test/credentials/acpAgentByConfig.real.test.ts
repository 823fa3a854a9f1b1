import type { ProviderInfo, ServerFrame } from "@planbridge/contracts"
import { resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { configuredAcpAgents } from "../../src/cli/acpAgents.ts"
import { providersFromEnv } from "../../src/cli/providersFromEnv.ts"
import { startServer, type RunningServer } from "../../src/http/HttpServer.ts"
import { AdapterError } from "../../src/provider/AdapterError.ts"
import { tempDirs, writeFiles } from "../support/fixtureHomes.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { startMockMessagesModel, type MockMessagesModel } from "../support/mockMessagesModel.ts"
import { connect, isEvent } from "../support/wsClient.ts"

/**
 * An ACP agent added without code: the real claude-agent-acp (0.23.1), configured in the data
 * dir's `acp-agents.json` under the name `claude-acp`, is listed with its capabilities and what
 * its `initialize` says about logging in, and runs a plan-mode session through the WebSocket
 * protocol: plan proposed, approved with `plan.decide`, the turn completes.
 */
const root = resolve(import.meta.dirname, "../../../..")
const dirs = tempDirs()
let mock: MockMessagesModel
let server: RunningServer

beforeAll(async () => {
  assertLoopbackOnly()
  mock = await startMockMessagesModel()
  const dataDir = dirs.make("acp-config-data")
  const agent = {
    name: "claude-acp",
    command: resolve(root, "node_modules/.bin/claude-agent-acp"),
    env: {
      HOME: dirs.make("acp-config-home"),
      ANTHROPIC_BASE_URL: mock.baseUrl,
      ANTHROPIC_API_KEY: "mock-key",
      ANTHROPIC_MODEL: "claude-sonnet-4-5",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      IS_SANDBOX: "1"
    }
  }
  writeFiles(dataDir, { "acp-agents.json": JSON.stringify({ agents: [agent] }) })
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dirs.make("acp-config-user") }
  server = await startServer({
    dataDir,
    host: "127.0.0.1",
    port: 0,
    logLevel: "silent",
    providers: providersFromEnv(env, "isolated", configuredAcpAgents(dataDir, []))
  })
})
afterAll(async () => {
  await server?.close()
  await mock?.close()
  dirs.removeAll()
})

const PLAN = "1. Read the README\n2. Write hello.txt"

describe("an ACP agent added by configuration", () => {
  it("is listed with its capabilities and auth state, and runs a plan-mode session over WebSocket", async () => {
    const res = await fetch(`${server.url}/api/providers`, { headers: { authorization: `Bearer ${server.token}` } })
    const { providers } = (await res.json()) as { providers: ReadonlyArray<ProviderInfo> }
    expect(providers.map((p) => p.provider)).toEqual(["claude-acp"])
    expect(providers[0]).toMatchObject({
      label: "claude-acp",
      ready: true,
      capabilities: { supportsPlanMode: true, supportsExitPlanMode: true }
    })
    expect(providers[0]?.auth?.label).toContain("claude-agent-acp")

    const client = await connect({ url: server.url, token: server.token })
    try {
      const welcome = client.frames.find((f) => f.type === "welcome")
      expect(welcome?.type === "welcome" && welcome.providers).toEqual(providers)
      mock.script(
        { blocks: [{ type: "tool_use", name: "ExitPlanMode", input: { plan: PLAN } }] },
        { blocks: [{ type: "text", text: "Approved; done." }] }
      )
      const cwd = dirs.make("acp-config-cwd")
      const start = await client.command({ type: "session.start", provider: "claude-acp", cwd, mode: "plan" })
      if (start.type !== "result") throw new Error(JSON.stringify(start))
      const { threadId } = start.result as { threadId: string }
      await client.command({ type: "thread.subscribe", threadId: threadId as never, afterSeq: 0 })
      await client.waitFor(
        (f): f is ServerFrame & { type: "event" } =>
          isEvent("mode.changed", threadId)(f) && f.event.type === "mode.changed" && f.event.payload.mode === "plan",
        60_000
      )
      await client.command({ type: "turn.start", threadId: threadId as never, text: "Plan hello.txt" })
      const proposed = await client.waitFor(isEvent("plan.proposed.completed", threadId), 90_000)
      if (proposed.event.type !== "plan.proposed.completed") throw new Error("unreachable")
      expect(proposed.event.payload.markdown).toBe(PLAN)
      const decided = await client.command({
        type: "plan.decide",
        threadId: threadId as never,
        planId: proposed.event.payload.planId,
        decision: "approved",
        clientRequestId: "acp-config-plan"
      })
      expect(decided.type).toBe("result")
      const done = await client.waitFor(isEvent("turn.completed", threadId), 90_000)
      expect(done.event.type === "turn.completed" && done.event.payload.status).toBe("completed")
    } finally {
      await client.close()
    }
  }, 240_000)

  it("a bad acp-agents.json is refused with the path of each problem", () => {
    const dataDir = dirs.make("acp-config-bad")
    writeFiles(dataDir, { "acp-agents.json": JSON.stringify({ agents: [{ name: "Claude", command: "" }] }) })
    expect(() => configuredAcpAgents(dataDir, [])).toThrow(AdapterError)
    expect(() => configuredAcpAgents(dataDir, [])).toThrow(
      /at \["agents"\]\[0\]\["name"\][\s\S]*at \["agents"\]\[0\]\["command"\]/
    )
    expect(() => configuredAcpAgents(dirs.make("acp-config-none"), ["codex=codex-acp"])).toThrow(
      "ACP agent 'codex': the name of a built-in provider; choose another"
    )
    expect(configuredAcpAgents(dirs.make("acp-config-flag"), ["my-agent=my-acp --stdio"])).toEqual([
      { name: "my-agent", command: "my-acp", args: ["--stdio"] }
    ])
  })
})
