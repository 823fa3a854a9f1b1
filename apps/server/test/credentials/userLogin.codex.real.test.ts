import type { ProviderInfo, ServerFrame } from "@planbridge/contracts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { providersFromEnv } from "../../src/cli/providersFromEnv.ts"
import { startServer, type RunningServer } from "../../src/http/HttpServer.ts"
import {
  changedFiles,
  codexApiKeyLogin,
  codexChatgptLogin,
  codexProjectConfig,
  codexUserConfig,
  FAKE_OPENAI_KEY,
  filesUnder,
  only,
  tempDirs,
  writeFiles
} from "../support/fixtureHomes.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { startMockResponsesModel, type MockResponsesModel } from "../support/mockResponsesModel.ts"
import { connect, isEvent, type TestClient } from "../support/wsClient.ts"
import { askTwoQuestions, PLAN_MARKDOWN, planReply } from "../provider/codex/realPeerSupport.ts"

/**
 * `user` credentials mode with the real `codex app-server` (0.171.0): the user's CODEX_HOME
 * (a fixture: an API-key login, their own model provider — the loopback mock —, an MCP server
 * entry and a trusted project) is used as it is. Planbridge's feature flags go in as `-c`
 * overrides, so the user's files stay byte-identical; Codex's own state (its databases) is what
 * Codex writes there whenever the user runs it.
 */
let mock: MockResponsesModel
const dirs = tempDirs()
const servers: Array<RunningServer> = []

beforeAll(async () => {
  assertLoopbackOnly()
  mock = await startMockResponsesModel()
})
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()))
  await mock?.close()
  dirs.removeAll()
})

const serveAs = async (env: Record<string, string>) => {
  const server = await startServer({
    dataDir: dirs.make("codex-user-data"),
    host: "127.0.0.1",
    port: 0,
    logLevel: "silent",
    providers: only(providersFromEnv(env, "user"), "codex")
  })
  servers.push(server)
  return server
}

const listed = async (server: RunningServer): Promise<ReadonlyArray<ProviderInfo>> => {
  const res = await fetch(`${server.url}/api/providers`, { headers: { authorization: `Bearer ${server.token}` } })
  return ((await res.json()) as { providers: ReadonlyArray<ProviderInfo> }).providers
}

const resultOf = (frame: ServerFrame & { type: "result" | "error" }) => {
  if (frame.type === "error") throw new Error(`command failed: ${frame.error.code}: ${frame.error.message}`)
  return frame.result as Record<string, unknown>
}

/** A user's Codex home and a project directory it trusts. */
const codexUser = (auth: string, model: "mock" | "openai") => {
  const codexHome = dirs.make("codex-home")
  const project = dirs.make("codex-project")
  const baseUrl = model === "mock" ? mock.baseUrl : undefined
  // A ChatGPT login's turn first asks `chatgpt_base_url` for its workspace; here a plain-HTTP mock.
  const chatgpt = model === "openai" ? `chatgpt_base_url = "${mock.baseUrl}/backend-api/"\n` : ""
  writeFiles(codexHome, { "config.toml": chatgpt + codexUserConfig(baseUrl, project), "auth.json": auth })
  writeFiles(project, codexProjectConfig())
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dirs.make("codex-user-home"), CODEX_HOME: codexHome }
  return { codexHome, project, env }
}

const startIn = async (client: TestClient, cwd: string) => {
  const { threadId } = resultOf(
    await client.command({ type: "session.start", provider: "codex", cwd, mode: "plan" })
  ) as { threadId: string }
  // From the first event on, so that `session.configured` is among the frames.
  resultOf(await client.command({ type: "thread.subscribe", threadId: threadId as never, afterSeq: 0 }))
  return threadId
}

describe("Codex with the user's own CODEX_HOME", () => {
  it("an API-key login: listed apiKey; a plan turn with questions; session.configured names the layers; the user's files unchanged", async () => {
    const { codexHome, project, env } = codexUser(codexApiKeyLogin(), "mock")
    const before = filesUnder(codexHome)
    const server = await serveAs(env)
    expect(await listed(server)).toMatchObject([
      { provider: "codex", label: "Codex", ready: true, auth: { status: "authenticated", method: "apiKey" } }
    ])
    const client = await connect({ url: server.url, token: server.token })
    try {
      mock.script({ output: [askTwoQuestions] }, { output: [planReply] })
      const threadId = await startIn(client, project)
      resultOf(await client.command({ type: "turn.start", threadId: threadId as never, text: "Plan a service." }))
      const requested = await client.waitFor(isEvent("user-input.requested", threadId), 90_000)
      if (requested.event.type !== "user-input.requested") throw new Error("unreachable")
      resultOf(
        await client.command({
          type: "userInput.respond",
          promptId: requested.event.payload.prompt.promptId,
          answers: [
            { questionId: "db_choice", selectedOptionIds: ["opt-1"] },
            { questionId: "test_scope", selectedOptionIds: ["opt-0"] }
          ] as never,
          clientRequestId: "user-mode-answer"
        })
      )
      const plan = await client.waitFor(isEvent("plan.proposed.completed", threadId), 90_000)
      expect(plan.event.type === "plan.proposed.completed" && plan.event.payload.markdown).toBe(PLAN_MARKDOWN)
      await client.waitFor(isEvent("turn.completed", threadId), 90_000)

      // The login's key is what the user's model provider sent.
      for (const request of mock.responseRequests()) {
        expect(request.headers.authorization).toBe(`Bearer ${FAKE_OPENAI_KEY}`)
      }
      const configured = client.frames.find(isEvent("session.configured", threadId))
      const layers = configured?.event.type === "session.configured" ? configured.event.payload.configLayers : undefined
      expect(layers?.map((l) => l.name)).toEqual(["sessionFlags", "project", "user", "system"])
      expect(layers?.find((l) => l.name === "project")).toEqual({ name: "project", mcpServers: ["project-tool"] })
      expect(layers?.find((l) => l.name === "user")).toEqual({
        name: "user",
        file: `${codexHome}/config.toml`,
        mcpServers: ["fixture-docs"]
      })
    } finally {
      await client.close()
    }
    await server.close()
    expect(changedFiles(codexHome, before)).toEqual([])
  }, 240_000)

  it("a ChatGPT login: listed chatgpt; a turn that cannot reach the vendor ends with a canonical error within a bound", async () => {
    const { codexHome, project, env } = codexUser(codexChatgptLogin(), "openai")
    const before = filesUnder(codexHome)
    const server = await serveAs(env)
    expect(await listed(server)).toMatchObject([
      { provider: "codex", ready: true, auth: { status: "authenticated", method: "chatgpt" } }
    ])
    const client = await connect({ url: server.url, token: server.token })
    const started = Date.now()
    try {
      const threadId = await startIn(client, project)
      resultOf(await client.command({ type: "turn.start", threadId: threadId as never, text: "Plan a service." }))
      const ended = await client.waitFor(isEvent("turn.completed", threadId), 120_000).catch((error: unknown) => {
        const seen = client.frames.flatMap((f) =>
          f.type === "event" ? [JSON.stringify(f.event.payload).slice(0, 200)] : []
        )
        throw new Error(`${String(error)}: ${seen.join("\n")}`)
      })
      expect(ended.event.type === "turn.completed" && ended.event.payload.status).toBe("failed")
      const error = client.frames.find(
        (f): f is ServerFrame & { type: "event" } =>
          f.type === "event" && f.threadId === threadId && f.event.type === "runtime.error"
      )
      expect(error?.event.type === "runtime.error" && error.event.payload.message).toMatch(/\S/)
      // Measured ~20 s (0.171.0 retries the workspace discovery); the bound leaves room for a loaded machine.
      expect(Date.now() - started).toBeLessThan(90_000)
    } finally {
      await client.close()
    }
    await server.close()
    expect(changedFiles(codexHome, before)).toEqual([])
  }, 240_000)
})
