import type { Command, RuntimeEvent, ServerFrame } from "@planbridge/contracts"
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type RunningServer } from "../../../src/http/HttpServer.ts"
import { makeCodexAdapter } from "../../../src/provider/codex/CodexAdapter.ts"
import { codexConfigToml } from "../../../src/provider/codex/CodexHome.ts"
import { codexCapabilities } from "../../../src/provider/codex/CodexMappingState.ts"
import { captureLog } from "../../support/logCapture.ts"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import {
  functionCallOutputs,
  startMockResponsesModel,
  type MockResponsesModel
} from "../../support/mockResponsesModel.ts"
import { connect, isEvent, type TestClient } from "../../support/wsClient.ts"

/**
 * Issue 28: every request a person could answer reaches them. The real `codex app-server` 0.169.0
 * (user mode, `approval_policy` on-request, its model scripted on loopback) runs a small stdio MCP
 * server (`support/mcpElicitingServer.mjs`, @modelcontextprotocol/sdk) declared in the home's
 * `config.toml`, through the whole Planbridge server (SQLite store, WebSocket client):
 * - a form elicitation with a secret field becomes a question card; the answers reach the MCP
 *   server exactly as given; the secret is nowhere in the database file or the logs;
 * - a URL elicitation becomes a URL prompt; opening it reaches the MCP server as `accept`;
 * - a permissions request (`request_permissions`) becomes an approval; the grant reaches Codex;
 * - an MCP tool allowed "for this session" (Codex's `_meta.persist`) is not asked for again.
 */

const SECRET = "sk-live-planbridge-28-DO-NOT-STORE"
const SERVER = "elicit"
/** Outside Codex's built-in catalog, so that MCP tools are offered to the model directly. */
const MODEL = "planbridge-scripted"

let mock: MockResponsesModel
let server: RunningServer
let client: TestClient
let dataDir: string
let mcpOut: string
const log = captureLog()
const dirs: Array<string> = []
const temp = (label: string) => {
  const dir = mkdtempSync(join(tmpdir(), `planbridge-${label}-`))
  dirs.push(dir)
  return dir
}

beforeAll(async () => {
  assertLoopbackOnly()
  mock = await startMockResponsesModel()
  dataDir = temp("elicit-data")
  const home = temp("elicit-codex-home")
  mcpOut = join(temp("elicit-mcp"), "received.jsonl")
  const fixture = join(import.meta.dirname, "../../support/mcpElicitingServer.mjs")
  writeFileSync(
    join(home, "config.toml"),
    [
      // The user's own Codex: on-request approvals, the permissions tool on, an MCP server.
      codexConfigToml({ model: MODEL, baseUrl: mock.baseUrl, envKey: "PLANBRIDGE_MOCK_KEY" }).replace(
        "[features]\n",
        "[features]\nrequest_permissions_tool = true\n"
      ),
      `approval_policy = "on-request"`,
      ``,
      `[mcp_servers.${SERVER}]`,
      `command = ${JSON.stringify(process.execPath)}`,
      `args = [${JSON.stringify(fixture)}]`,
      `env = { PLANBRIDGE_MCP_OUT = ${JSON.stringify(mcpOut)} }`,
      // The thread starts once the server is up, so that the first turn is offered its tools.
      `required = true`,
      ``
    ].join("\n")
  )
  const userEnv = {
    PATH: process.env.PATH ?? "",
    HOME: home,
    CODEX_HOME: home,
    PLANBRIDGE_MOCK_KEY: "mock-key"
  }
  server = await startServer({
    dataDir,
    host: "127.0.0.1",
    port: 0,
    logLevel: "debug",
    logDestination: log.destination,
    providers: [
      {
        adapter: makeCodexAdapter({ credentials: "user", userEnv, approvalPolicy: "on-request" }),
        capabilities: codexCapabilities
      }
    ]
  })
  client = await connect({ url: server.url, token: server.token })
}, 60_000)

afterAll(async () => {
  await client?.close()
  await server?.close()
  await mock?.close()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const ok = async (command: Command) => {
  const frame = await client.command(command)
  if (frame.type === "error") throw new Error(`${command.type} failed: ${frame.error.code}: ${frame.error.message}`)
  return frame.result as Record<string, unknown>
}

const eventOf = async <T extends RuntimeEvent["type"]>(type: T, threadId: string) => {
  const frame = await client.waitFor(isEvent(type, threadId), 90_000)
  return frame.event as Extract<RuntimeEvent, { readonly type: T }>
}

type EventFrame = Extract<ServerFrame, { readonly type: "event" }>

/** The `n`th (from 0) event of `type` on the thread that `match` accepts. */
const nth = async <T extends RuntimeEvent["type"]>(
  type: T,
  threadId: string,
  n: number,
  match: (event: Extract<RuntimeEvent, { readonly type: T }>) => boolean = () => true
) => {
  type Event = Extract<RuntimeEvent, { readonly type: T }>
  const matching = (f: ServerFrame): f is EventFrame => isEvent(type, threadId)(f) && match(f.event as Event)
  await client.waitFor((f): f is EventFrame => matching(f) && client.frames.filter(matching).length > n, 90_000)
  return client.frames.filter(matching)[n]!.event as Event
}

/**
 * Codex asks before it runs an MCP tool (an elicitation without fields): an approval, allowed
 * here (`optionId`). Codex 0.171.0 offers to remember the allow for the session or always.
 */
const allowTool = async (threadId: string, n: number, optionId = "accept") => {
  const asked = await nth("request.opened", threadId, n, (e) => e.payload.requestKind === "approval")
  expect(asked.payload.options.map((o) => [o.id, o.kind])).toEqual([
    ["accept", "allow_once"],
    ["accept_session", "allow_always"],
    ["accept_always", "allow_always"],
    ["decline", "reject_once"],
    ["cancel", "other"]
  ])
  await ok({
    type: "request.respond",
    requestId: asked.payload.requestId,
    optionId: optionId as never,
    clientRequestId: `allow-${asked.payload.requestId}`
  })
  return asked
}

/** A thread whose one turn calls `tool` then says `Done.`. */
const turnCalling = async (tool: string, args: unknown = {}, namespace: string | null = `mcp__${SERVER}`) => {
  mock.script(
    {
      output: [{ type: "function_call", name: tool, arguments: args, ...(namespace === null ? {} : { namespace }) }]
    },
    { output: [{ type: "text", text: "Done." }] }
  )
  const cwd = temp("elicit-cwd")
  const { threadId } = (await ok({ type: "session.start", provider: "codex", cwd, mode: "default" })) as {
    threadId: string
  }
  await ok({ type: "thread.subscribe", threadId: threadId as never })
  await ok({ type: "turn.start", threadId: threadId as never, text: "Go." })
  return threadId
}

const received = (): ReadonlyArray<{ tool: string; result: unknown }> => {
  try {
    return readFileSync(mcpOut, "utf8")
      .trim()
      .split("\n")
      .filter((l) => l.length > 0)
      .map((l) => JSON.parse(l) as { tool: string; result: unknown })
  } catch {
    return []
  }
}

const filesOf = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))

describe("Codex: MCP elicitations and permission requests become prompts and approvals", { timeout: 300_000 }, () => {
  it("a form with a secret field: a question card, the answers reach the MCP server as given, the secret stored nowhere", async () => {
    const threadId = await turnCalling("ask_form")
    const approval = await allowTool(threadId, 0)
    expect(approval.payload.title).toBe('Allow the elicit MCP server to run tool "ask_form"?')
    const requested = await eventOf("user-input.requested", threadId)
    const prompt = requested.payload.prompt
    expect(prompt.url).toBeUndefined()
    expect(prompt.description).toBe("Connect the fixture service")
    expect(prompt.questions.map((q) => [q.id, q.label, q.secret, q.allowFreeform, q.required])).toEqual([
      ["name", "Account name", false, true, true],
      ["token", "API token", true, true, true]
    ])
    await ok({
      type: "userInput.respond",
      promptId: prompt.promptId,
      answers: [
        { questionId: "name", text: "ada" },
        { questionId: "token", text: SECRET }
      ] as never,
      clientRequestId: "form-1"
    })
    const resolved = await eventOf("user-input.resolved", threadId)
    expect(resolved.payload).toMatchObject({
      resolution: "answered",
      answers: [
        { questionId: "name", text: "ada" },
        { questionId: "token", redacted: true }
      ]
    })
    await eventOf("turn.completed", threadId)
    expect(received()).toContainEqual({
      tool: "ask_form",
      result: { action: "accept", content: { name: "ada", token: SECRET } }
    })
    // The secret reached the MCP server only: not the database (every file of the data dir,
    // WAL included), not the logs, not the frames sent to the client.
    for (const file of filesOf(dataDir)) expect(readFileSync(file).includes(SECRET), file).toBe(false)
    expect(log.text()).not.toContain(SECRET)
    expect(JSON.stringify(client.frames)).not.toContain(SECRET)
    expect(log.parsed().length).toBeGreaterThan(0)
  })

  it("a URL elicitation: the client is given the URL; opening it reaches the MCP server as accept", async () => {
    const threadId = await turnCalling("ask_url")
    await allowTool(threadId, 0)
    const requested = await eventOf("user-input.requested", threadId)
    const prompt = requested.payload.prompt
    expect(prompt.url).toEqual({ url: "https://login.example.test/device?code=PB-28", elicitationId: "login-28" })
    expect(prompt.questions).toEqual([
      {
        id: "open_url",
        label: "Log in to the fixture service",
        options: [{ id: "open", label: "Open" }],
        multiSelect: false,
        allowFreeform: false,
        secret: false,
        required: true
      }
    ])
    await ok({
      type: "userInput.respond",
      promptId: prompt.promptId,
      answers: [{ questionId: "open_url", selectedOptionIds: ["open"] }] as never,
      clientRequestId: "url-1"
    })
    // Codex 0.169.0 tells its client nothing of the completion: opening it answers the prompt.
    const resolved = await eventOf("user-input.resolved", threadId)
    expect(resolved.payload).toMatchObject({
      resolution: "answered",
      answers: [{ questionId: "open_url", selectedOptionIds: ["open"] }]
    })
    await eventOf("turn.completed", threadId)
    // Codex 0.169.0 hands the MCP server an empty `content` with the `accept` it was sent.
    expect(received()).toContainEqual({ tool: "ask_url", result: { action: "accept", content: {} } })
  })

  it("a declined URL elicitation reaches the MCP server as decline", async () => {
    const threadId = await turnCalling("ask_url")
    await allowTool(threadId, 0)
    const requested = await eventOf("user-input.requested", threadId)
    const before = received().length
    await ok({
      type: "userInput.dismiss",
      promptId: requested.payload.prompt.promptId,
      resolution: "empty",
      clientRequestId: "url-2"
    })
    expect((await eventOf("user-input.resolved", threadId)).payload.resolution).toBe("empty")
    await eventOf("turn.completed", threadId)
    expect(received().slice(before)).toEqual([{ tool: "ask_url", result: { action: "decline" } }])
  })

  it("an MCP tool allowed for this session: its second call is not asked again", async () => {
    const ping = { type: "function_call", name: "ping", arguments: {}, namespace: `mcp__${SERVER}` } as const
    mock.script({ output: [ping] }, { output: [ping] }, { output: [{ type: "text", text: "Done." }] })
    const { threadId } = (await ok({
      type: "session.start",
      provider: "codex",
      cwd: temp("ping-cwd"),
      mode: "default"
    })) as {
      threadId: string
    }
    await ok({ type: "thread.subscribe", threadId: threadId as never })
    const before = received().length
    await ok({ type: "turn.start", threadId: threadId as never, text: "Ping twice." })
    const asked = await allowTool(threadId, 0, "accept_session")
    const resolved = await nth("request.resolved", threadId, 0, (e) => e.payload.requestId === asked.payload.requestId)
    expect(resolved.payload).toMatchObject({ resolution: "responded", optionId: "accept_session" })
    await eventOf("turn.completed", threadId)
    // Both calls ran; only the first was asked (the reply carried `_meta: {persist: "session"}`).
    expect(received().slice(before)).toEqual([{ tool: "ping" }, { tool: "ping" }])
    const approvals = client.frames.filter(
      (f) =>
        isEvent("request.opened", threadId)(f) &&
        f.event.type === "request.opened" &&
        f.event.payload.requestKind === "approval"
    )
    expect(approvals).toHaveLength(1)
  })

  it("a permissions request: an approval; the grant reaches Codex as asked, for the turn", async () => {
    const asked = { network: { enabled: true } }
    const threadId = await turnCalling("request_permissions", { reason: "fetch the docs", permissions: asked }, null)
    const opened = await nth("request.opened", threadId, 0, (e) => e.payload.requestKind === "approval")
    expect(opened.payload).toMatchObject({
      title: "Grant more permissions",
      native: { method: "item/permissions/requestApproval" }
    })
    expect(opened.payload.detail).toContain("fetch the docs")
    expect(opened.payload.options.map((o) => [o.id, o.kind])).toEqual([
      ["grant_turn", "allow_once"],
      ["grant_session", "allow_always"],
      ["decline", "reject_once"]
    ])
    await ok({
      type: "request.respond",
      requestId: opened.payload.requestId,
      optionId: "grant_turn" as never,
      clientRequestId: "grant-1"
    })
    const resolved = await nth("request.resolved", threadId, 0, (e) => e.payload.requestId === opened.payload.requestId)
    expect(resolved.payload).toMatchObject({ resolution: "responded", optionId: "grant_turn" })
    await eventOf("turn.completed", threadId)
    // What Codex made of the grant is what it tells the model in the tool's output.
    // The turn's last model request carries the tool's output.
    const outputs = functionCallOutputs(mock.responseRequests().at(-1)!)
    expect(outputs.map((o) => JSON.parse(String(o.output)) as unknown)).toEqual([
      { permissions: { network: { enabled: true }, file_system: null }, scope: "turn" }
    ])
  })
})
