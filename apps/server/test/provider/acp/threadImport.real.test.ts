import { ThreadId } from "@planbridge/contracts"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer } from "../../../src/http/HttpServer.ts"
import { makeAcpAdapter } from "../../../src/provider/acp/AcpAdapter.ts"
import { claudeAcpProfile } from "../../../src/provider/acp/profiles/claudeAcp.ts"
import { codexAcpProfile } from "../../../src/provider/acp/profiles/codexAcp.ts"
import { cursorProfile } from "../../../src/provider/acp/profiles/cursor.ts"
import { runCli } from "../../cli/support/runCli.ts"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import { startMockMessagesModel, type MockMessagesModel } from "../../support/mockMessagesModel.ts"
import { startMockResponsesModel, type MockResponsesModel } from "../../support/mockResponsesModel.ts"
import { resultOf } from "../../support/resumeRig.ts"
import { connect, isEvent } from "../../support/wsClient.ts"
import { openSession, run } from "./harness.ts"
import { claudeEnv, writeCodexHome } from "./peers.ts"

/**
 * Issue 28: `planbridge threads import`. A session made through one Planbridge server with the
 * real claude-agent-acp 0.101.0 is forgotten (a fresh data dir on the same agent home), listed by
 * the agent's own `session/list`, imported as a new thread (taken up with `session/resume`), and
 * the next turn reaches the scripted model with the earlier conversation. With the real codex-acp
 * 2.6.0, a session made directly with the agent (no Planbridge server) is listed and imported.
 */
const root = resolve(import.meta.dirname, "../../../../..")
const SECRET_WORD = "MANGOSTEEN"
const dirs: Array<string> = []
const temp = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(dir)
  return dir
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

describe("threads import with the real claude-agent-acp 0.101.0", { timeout: 240_000 }, () => {
  let model: MockMessagesModel
  beforeAll(async () => {
    assertLoopbackOnly()
    model = await startMockMessagesModel()
  })
  afterAll(async () => {
    await model?.close()
  })

  it("lists the agent's session in a fresh data dir, imports it, and the next turn has the earlier one", async () => {
    const home = temp("planbridge-import-home-")
    const work = join(home, "work")
    mkdirSync(work)
    const profile = claudeAcpProfile({ command: resolve(root, "node_modules/.bin/claude-agent-acp") })
    const cursor = cursorProfile({
      command: resolve(root, "node_modules/.bin/tsx"),
      args: [resolve(root, "apps/server/test/provider/acp/scriptedCursorAgent.ts")]
    })
    const providers = () => [
      { adapter: makeAcpAdapter(profile, { env: claudeEnv(home, model.baseUrl) }), capabilities: profile.capabilities },
      {
        adapter: makeAcpAdapter(cursor, { env: { PATH: process.env.PATH, HOME: home, CURSOR_API_KEY: "test-key" } }),
        capabilities: cursor.capabilities
      }
    ]
    const start = (dataDir: string) =>
      startServer({ dataDir, host: "127.0.0.1", port: 0, logLevel: "silent", providers: providers() })

    // A conversation made through a first server, whose data dir is then forgotten.
    let nativeSessionId: string
    const first = await start(temp("planbridge-import-data-a-"))
    try {
      const a = await connect({ url: first.url, token: first.token })
      const { threadId } = resultOf(
        await a.command({ type: "session.start", provider: "acp-claude", cwd: work, mode: "default" })
      ) as { threadId: string }
      resultOf(await a.command({ type: "thread.subscribe", threadId: threadId as never, afterSeq: 0 }))
      const started = await a.waitFor(isEvent("session.started", threadId))
      nativeSessionId = (started.event.payload as { nativeSessionId: string }).nativeSessionId
      model.script({ blocks: [{ type: "text", text: "Noted." }] })
      resultOf(await a.command({ type: "turn.start", threadId: threadId as never, text: `Remember ${SECRET_WORD}.` }))
      await a.waitFor(isEvent("turn.completed", threadId), 90_000)
      await a.close()
    } finally {
      await first.close()
    }

    const dataDir = temp("planbridge-import-data-b-")
    const server = await start(dataDir)
    const cli = (...args: ReadonlyArray<string>) =>
      runCli("threads", "import", ...args, "--url", server.url, "--data-dir", dataDir)
    try {
      const listed = await cli("--provider", "acp-claude", "--list", "--cwd", work, "--json")
      expect(listed.stderr).toBe("")
      const list = JSON.parse(listed.stdout) as {
        sessions: Array<{ sessionId: string; cwd: string }>
        takeUpWith: string
      }
      expect(list.sessions.map((s) => s.sessionId)).toContain(nativeSessionId)
      expect(list.takeUpWith).toBe("session/resume")

      // Typed refusals, each with the path of what was wrong.
      const unknownProvider = await cli("--provider", "nobody", "--list", "--json")
      expect(unknownProvider.code).toBe(1)
      expect(JSON.parse(unknownProvider.stderr).error).toMatchObject({ code: "unknown_provider", path: ["provider"] })
      const noList = await cli("--provider", "cursor", "--list", "--json")
      expect(JSON.parse(noList.stderr).error).toMatchObject({ code: "unsupported", path: ["provider"] })
      expect(JSON.parse(noList.stderr).error.message).toContain("sessionCapabilities.list")
      const unknownSession = await cli("--provider", "acp-claude", "no-such-session", "--json")
      expect(JSON.parse(unknownSession.stderr).error).toMatchObject({
        code: "invalid_frame",
        path: ["nativeSessionId"]
      })

      const imported = await cli("--provider", "acp-claude", nativeSessionId, "--json")
      expect(imported.stderr).toBe("")
      const thread = JSON.parse(imported.stdout) as { threadId: string; cwd: string; takeUpWith: string }
      expect(thread).toMatchObject({ nativeSessionId, cwd: work, takeUpWith: "session/resume" })

      const b = await connect({ url: server.url, token: server.token })
      resultOf(await b.command({ type: "thread.subscribe", threadId: thread.threadId as never, afterSeq: 0 }))
      const started = await b.waitFor(isEvent("session.started", thread.threadId))
      expect(started.event.payload).toMatchObject({ resumed: true, resumedFrom: nativeSessionId, nativeSessionId })
      model.script({ blocks: [{ type: "text", text: `It was ${SECRET_WORD}.` }] })
      const before = model.mainRequests().length
      resultOf(await b.command({ type: "turn.start", threadId: thread.threadId as never, text: "Which word was it?" }))
      await b.waitFor(isEvent("turn.completed", thread.threadId), 90_000)
      const request = JSON.stringify(model.mainRequests()[before]!.body.messages)
      expect(request).toContain(`Remember ${SECRET_WORD}.`)
      expect(request).toContain("Which word was it?")
      await b.close()
    } finally {
      await server.close()
    }
  })
})

describe("threads import with the real codex-acp 2.6.0", { timeout: 240_000 }, () => {
  let model: MockResponsesModel
  beforeAll(async () => {
    assertLoopbackOnly()
    model = await startMockResponsesModel()
  })
  afterAll(async () => {
    await model?.close()
  })

  it("a session made directly with the agent is listed, imported, and the next turn has the earlier one", async () => {
    const home = temp("planbridge-import-codex-home-")
    const work = join(home, "work")
    mkdirSync(work)
    writeCodexHome(home, model.baseUrl)
    const profile = codexAcpProfile({ command: resolve(root, "node_modules/.bin/codex-acp") })
    const adapter = () =>
      makeAcpAdapter(profile, { env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: home, MOCK_KEY: "mock-key" } })

    // The agent alone, through the adapter: no Planbridge server keeps a record of it.
    const direct = await openSession(adapter(), { threadId: ThreadId.make("direct"), cwd: work, mode: "default" })
    let nativeSessionId: string
    try {
      nativeSessionId = direct.log.ofType("session.started")[0]!.payload.nativeSessionId!
      model.script({ output: [{ type: "text", text: "Noted." }] })
      await run(direct.session.startTurn({ text: `Remember ${SECRET_WORD}.` }))
      await direct.log.waitFor("turn.completed", () => true, { ms: 90_000 })
    } finally {
      await direct.close()
    }

    const dataDir = temp("planbridge-import-codex-data-")
    const server = await startServer({
      dataDir,
      host: "127.0.0.1",
      port: 0,
      logLevel: "silent",
      providers: [{ adapter: adapter(), capabilities: profile.capabilities }]
    })
    const cli = (...args: ReadonlyArray<string>) =>
      runCli("threads", "import", "--provider", "acp-codex", ...args, "--url", server.url, "--data-dir", dataDir)
    try {
      const listed = await cli("--list", "--json")
      expect(listed.stderr).toBe("")
      const list = JSON.parse(listed.stdout) as { sessions: Array<{ sessionId: string }>; takeUpWith: string }
      expect(list.sessions.map((s) => s.sessionId)).toContain(nativeSessionId)
      expect(list.takeUpWith).toBe("session/resume")
      const text = await cli("--list")
      expect(text.stdout).toContain(nativeSessionId)
      expect(text.stdout).toContain("taken up with session/resume")

      const imported = await cli(nativeSessionId, "--json")
      expect(imported.stderr).toBe("")
      const thread = JSON.parse(imported.stdout) as { threadId: string }
      const b = await connect({ url: server.url, token: server.token })
      resultOf(await b.command({ type: "thread.subscribe", threadId: thread.threadId as never, afterSeq: 0 }))
      const started = await b.waitFor(isEvent("session.started", thread.threadId))
      expect(started.event.payload).toMatchObject({ resumed: true, resumedFrom: nativeSessionId, nativeSessionId })
      model.script({ output: [{ type: "text", text: `It was ${SECRET_WORD}.` }] })
      const before = model.responseRequests().length
      resultOf(await b.command({ type: "turn.start", threadId: thread.threadId as never, text: "Which word was it?" }))
      await b.waitFor(isEvent("turn.completed", thread.threadId), 90_000)
      expect(JSON.stringify(model.responseRequests()[before]!.body.input)).toContain(`Remember ${SECRET_WORD}.`)
      await b.close()
    } finally {
      await server.close()
    }
  })
})
