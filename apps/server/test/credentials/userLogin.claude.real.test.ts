import type { ProviderInfo, ServerFrame } from "@planbridge/contracts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { providersFromEnv } from "../../src/cli/providersFromEnv.ts"
import { startServer, type RunningServer } from "../../src/http/HttpServer.ts"
import {
  changedFiles,
  claudeOauthLogin,
  FAKE_CLAUDE_TOKEN,
  filesUnder,
  only,
  tempDirs,
  writeFiles
} from "../support/fixtureHomes.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { startMockMessagesModel, type MockMessagesModel } from "../support/mockMessagesModel.ts"
import { connect, isEvent } from "../support/wsClient.ts"

/**
 * `user` credentials mode with the real Claude Agent SDK and CLI: the user's own login is what
 * the model endpoint sees (a fixture `.credentials.json`, or `CLAUDE_CODE_OAUTH_TOKEN`), the
 * provider is listed with it, and with no login at all a session is refused `auth_required`
 * before anything reaches the model. The model is scripted on loopback (`ANTHROPIC_BASE_URL` in
 * the user's environment, as a user behind a proxy has it).
 */
let mock: MockMessagesModel
const dirs = tempDirs()
const servers: Array<RunningServer> = []

beforeAll(async () => {
  assertLoopbackOnly()
  mock = await startMockMessagesModel()
})
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()))
  await mock?.close()
  dirs.removeAll()
})

/** A server in user mode whose environment is `env` (the user's), offering Claude only. */
const serveAs = async (env: Record<string, string>) => {
  const server = await startServer({
    dataDir: dirs.make("claude-user-data"),
    host: "127.0.0.1",
    port: 0,
    logLevel: "silent",
    providers: only(providersFromEnv(env, "user"), "claude")
  })
  servers.push(server)
  return server
}

const userEnv = (extra: Record<string, string>) => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: dirs.make("claude-user-home"),
  ANTHROPIC_BASE_URL: mock.baseUrl,
  // A server started from inside Claude Code inherits these; the CLI must not see them.
  CLAUDECODE: "1",
  CLAUDE_CODE_ENTRYPOINT: "cli",
  CLAUDE_CODE_SSE_PORT: "1",
  ...extra
})

const listed = async (server: RunningServer): Promise<ReadonlyArray<ProviderInfo>> => {
  const res = await fetch(`${server.url}/api/providers`, { headers: { authorization: `Bearer ${server.token}` } })
  expect(res.status).toBe(200)
  return ((await res.json()) as { providers: ReadonlyArray<ProviderInfo> }).providers
}

/** One default-mode turn; returns the main requests the model received for it. */
const oneTurn = async (server: RunningServer, cwd: string, reply: string) => {
  const before = mock.mainRequests().length
  mock.script({ blocks: [{ type: "text", text: reply }] })
  const client = await connect({ url: server.url, token: server.token })
  try {
    const start = await client.command({ type: "session.start", provider: "claude", cwd, mode: "default" })
    if (start.type !== "result") throw new Error(JSON.stringify(start))
    const { threadId } = start.result as { threadId: string }
    await client.command({ type: "thread.subscribe", threadId: threadId as never })
    await client.command({ type: "turn.start", threadId: threadId as never, text: "Say hello" })
    const completed = await client.waitFor(isEvent("turn.completed", threadId), 90_000)
    expect(completed.event.type === "turn.completed" && completed.event.payload.status).toBe("completed")
    const configured = client.frames.filter((f): f is ServerFrame & { type: "event" } =>
      isEvent("session.configured", threadId)(f)
    )
    return { requests: mock.mainRequests().slice(before), configured }
  } finally {
    await client.close()
  }
}

describe("Claude with the user's own login", () => {
  it("a .credentials.json login: listed oauth, the model sees its bearer token and no x-api-key; nothing in the config dir changed", async () => {
    const configDir = dirs.make("claude-config")
    writeFiles(configDir, claudeOauthLogin())
    const before = filesUnder(configDir)
    const server = await serveAs(userEnv({ CLAUDE_CONFIG_DIR: configDir }))
    const [claude] = await listed(server)
    expect(claude).toMatchObject({
      provider: "claude",
      label: "Claude",
      ready: true,
      auth: { status: "authenticated", method: "oauth", label: "Claude Max" }
    })
    const { requests, configured } = await oneTurn(server, dirs.make("claude-user-cwd"), "Hello from the login")
    expect(requests.length).toBeGreaterThan(0)
    for (const request of requests) {
      expect(request.headers.authorization).toBe(`Bearer ${FAKE_CLAUDE_TOKEN}`)
      expect(request.headers["x-api-key"]).toBeUndefined()
    }
    // Which settings the session inherited: the user's, the project's and the local ones.
    const layers = configured.map((f) => f.event.type === "session.configured" && f.event.payload.configLayers)
    expect(layers[0]).toEqual([{ name: "user" }, { name: "project" }, { name: "local" }])
    expect(changedFiles(configDir, before)).toEqual([])
  }, 180_000)

  it("CLAUDE_CODE_OAUTH_TOKEN: listed oauth, the model sees that token", async () => {
    const token = "sk-ant-oat01-planbridge-env-token"
    const server = await serveAs(userEnv({ CLAUDE_CODE_OAUTH_TOKEN: token }))
    const [claude] = await listed(server)
    expect(claude?.auth).toMatchObject({ status: "authenticated", method: "oauth" })
    expect(claude?.auth?.label).toContain("CLAUDE_CODE_OAUTH_TOKEN")
    const { requests } = await oneTurn(server, dirs.make("claude-user-cwd"), "Hello from the token")
    expect(requests.map((r) => r.headers.authorization)).toEqual(requests.map(() => `Bearer ${token}`))
    expect(requests.some((r) => r.headers["x-api-key"] !== undefined)).toBe(false)
  }, 180_000)

  it("no login at all: listed unauthenticated with the hint; session.start → auth_required, no request reaches the model", async () => {
    // The earlier sessions' CLIs may still send a late request (a title): they end first.
    await Promise.all(servers.splice(0).map((s) => s.close()))
    const server = await serveAs(userEnv({}))
    const [claude] = await listed(server)
    expect(claude).toMatchObject({ provider: "claude", ready: false, auth: { status: "unauthenticated" } })
    expect(claude?.auth?.hint).toContain("claude /login")
    const requestsBefore = mock.requests.length
    const client = await connect({ url: server.url, token: server.token })
    try {
      const welcome = client.frames.find((f) => f.type === "welcome")
      expect(welcome?.type === "welcome" && welcome.providers).toEqual([claude])
      const start = await client.command({ type: "session.start", provider: "claude", cwd: "/tmp", mode: "plan" })
      expect(start.type).toBe("error")
      if (start.type !== "error") throw new Error("unreachable")
      expect(start.error.code).toBe("auth_required")
      expect(start.error.message).toContain("claude /login")
    } finally {
      await client.close()
    }
    // The CLI's re-probe may check that the endpoint answers (`GET /api/hello`, no credential): no model request.
    const after = mock.requests.slice(requestsBefore)
    expect(after.filter((r) => r.kind !== "other" || r.path.includes("/v1/"))).toEqual([])
    expect(after.filter((r) => r.headers.authorization !== undefined || r.headers["x-api-key"] !== undefined)).toEqual(
      []
    )
  }, 120_000)
})
