import { ThreadId } from "@planbridge/contracts"
import { Effect } from "effect"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type RunningServer } from "../../../src/http/HttpServer.ts"
import { makeAcpAdapter } from "../../../src/provider/acp/AcpAdapter.ts"
import { claudeAcpProfile } from "../../../src/provider/acp/profiles/claudeAcp.ts"
import { codexAcpProfile } from "../../../src/provider/acp/profiles/codexAcp.ts"
import { cursorProfile } from "../../../src/provider/acp/profiles/cursor.ts"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import { startMockMessagesModel, type MockMessagesModel } from "../../support/mockMessagesModel.ts"
import { startMockResponsesModel, type MockResponsesModel } from "../../support/mockResponsesModel.ts"
import { errorOf, resultOf } from "../../support/resumeRig.ts"
import { connect, isEvent } from "../../support/wsClient.ts"
import type { TranscriptEntry } from "../../../src/provider/kernel/transcript.ts"
import { adapterFailure, openSession, run } from "./harness.ts"
import { claudeEnv, writeCodexHome } from "./peers.ts"

/**
 * Issues 16 and 28 over ACP. Both installed real agents (@agentclientprotocol codex-acp 2.6.0 and
 * claude-agent-acp 0.101.0) announce `sessionCapabilities.resume`: a new agent process takes the
 * session up with `session/resume` (no history replayed), and the model sees the earlier turn. The scripted
 * Cursor-profile agent plays one that does not announce it: `unsupported`, from the adapter and
 * from `thread.resume`.
 */
const root = resolve(import.meta.dirname, "../../../../..")
const SECRET_WORD = "PINEAPPLE"
const dirs: Array<string> = []
/** The methods of the requests we sent, as the session's tap saw them. */
const sentMethods = (lines: ReadonlyArray<TranscriptEntry>) =>
  lines.flatMap((l) => {
    const method = (l.msg as { readonly method?: unknown } | null)?.method
    return l.dir === "out" && typeof method === "string" ? [method] : []
  })
const temp = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(dir)
  return dir
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

describe("session/resume with the real claude-agent-acp 0.101.0", { timeout: 180_000 }, () => {
  let model: MockMessagesModel
  beforeAll(async () => {
    assertLoopbackOnly()
    model = await startMockMessagesModel()
  })
  afterAll(async () => {
    await model?.close()
  })

  it("a new agent process resumes the session: resumed, same native id, and the model gets the earlier turn", async () => {
    const home = temp("planbridge-acp-resume-")
    const work = join(home, "work")
    mkdirSync(work)
    const adapter = makeAcpAdapter(claudeAcpProfile({ command: resolve(root, "node_modules/.bin/claude-agent-acp") }), {
      env: claudeEnv(home, model.baseUrl),
      tap: (line) => lines.push(line)
    })
    const lines: Array<TranscriptEntry> = []
    const threadId = ThreadId.make("thread-acp-resume")
    const first = await openSession(adapter, { threadId, cwd: work, mode: "default" })
    let nativeSessionId: string
    try {
      const configured = first.log.ofType("session.configured")[0]
      expect(configured?.payload.capabilities.supportsResume).toBe(true)
      nativeSessionId = first.log.ofType("session.started")[0]!.payload.nativeSessionId!
      model.script({ blocks: [{ type: "text", text: "Noted." }] })
      await run(first.session.startTurn({ text: `Remember the word ${SECRET_WORD}.` }))
      await first.log.waitFor("turn.completed", () => true, { ms: 90_000 })
    } finally {
      await first.close()
    }
    lines.length = 0

    const second = await openSession(adapter, {
      threadId,
      cwd: work,
      mode: "default",
      resumeNativeSessionId: nativeSessionId
    })
    try {
      expect(second.log.ofType("session.started")[0]?.payload).toMatchObject({ resumed: true, nativeSessionId })
      // Resumed, not loaded: the agent offers session/resume, and nothing was replayed.
      expect(sentMethods(lines)).toContain("session/resume")
      expect(sentMethods(lines)).not.toContain("session/load")
      expect(second.log.ofType("runtime.warning").filter((e) => e.payload.code === "history_not_mapped")).toEqual([])
      model.script({ blocks: [{ type: "text", text: `It was ${SECRET_WORD}.` }] })
      const before = model.mainRequests().length
      await run(second.session.startTurn({ text: "Which word did I ask you to remember?" }))
      await second.log.waitFor("turn.completed", () => true, { ms: 90_000 })
      const request = JSON.stringify(model.mainRequests()[before]!.body.messages)
      expect(request).toContain(`Remember the word ${SECRET_WORD}.`)
      expect(request).toContain("Which word did I ask you to remember?")
    } finally {
      await second.close()
    }
  })
})

describe("session/resume with the real codex-acp 2.6.0", { timeout: 180_000 }, () => {
  let model: MockResponsesModel
  beforeAll(async () => {
    assertLoopbackOnly()
    model = await startMockResponsesModel()
  })
  afterAll(async () => {
    await model?.close()
  })

  it("a new agent process resumes the session on the same CODEX_HOME, and the model gets the earlier turn", async () => {
    const home = temp("planbridge-codex-acp-resume-")
    const work = join(home, "work")
    mkdirSync(work)
    writeCodexHome(home, model.baseUrl)
    const adapter = makeAcpAdapter(codexAcpProfile({ command: resolve(root, "node_modules/.bin/codex-acp") }), {
      env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: home, MOCK_KEY: "mock-key" },
      tap: (line) => lines.push(line)
    })
    const lines: Array<TranscriptEntry> = []
    const threadId = ThreadId.make("thread-codex-acp-resume")
    const first = await openSession(adapter, { threadId, cwd: work, mode: "default" })
    let nativeSessionId: string
    try {
      expect(first.log.ofType("session.configured")[0]?.payload.capabilities.supportsResume).toBe(true)
      nativeSessionId = first.log.ofType("session.started")[0]!.payload.nativeSessionId!
      model.script({ output: [{ type: "text", text: "Noted." }] })
      await run(first.session.startTurn({ text: `Remember the word ${SECRET_WORD}.` }))
      await first.log.waitFor("turn.completed", () => true, { ms: 90_000 })
    } finally {
      await first.close()
    }
    lines.length = 0
    const second = await openSession(adapter, {
      threadId,
      cwd: work,
      mode: "default",
      resumeNativeSessionId: nativeSessionId
    })
    try {
      expect(second.log.ofType("session.started")[0]?.payload).toMatchObject({ resumed: true, nativeSessionId })
      // Resumed, not loaded: the agent offers session/resume, and nothing was replayed.
      expect(sentMethods(lines)).toContain("session/resume")
      expect(sentMethods(lines)).not.toContain("session/load")
      expect(second.log.ofType("runtime.warning").filter((e) => e.payload.code === "history_not_mapped")).toEqual([])
      model.script({ output: [{ type: "text", text: `It was ${SECRET_WORD}.` }] })
      const before = model.responseRequests().length
      await run(second.session.startTurn({ text: "Which word did I ask you to remember?" }))
      await second.log.waitFor("turn.completed", () => true, { ms: 90_000 })
      expect(JSON.stringify(model.responseRequests()[before]!.body.input)).toContain(
        `Remember the word ${SECRET_WORD}.`
      )
    } finally {
      await second.close()
    }
  })
})

describe(
  "an ACP agent that does not announce loadSession (the scripted Cursor-profile agent)",
  { timeout: 60_000 },
  () => {
    const profile = cursorProfile({
      command: resolve(root, "node_modules/.bin/tsx"),
      args: [resolve(root, "apps/server/test/provider/acp/scriptedCursorAgent.ts")]
    })
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      CURSOR_API_KEY: "test-key",
      SCRIPTED_CURSOR_NO_LOAD: "1"
    }
    const adapter = makeAcpAdapter(profile, { env })

    it("the adapter refuses session/load with unsupported", async () => {
      const error = await adapterFailure(
        Effect.scoped(
          adapter.startSession({
            threadId: ThreadId.make("thread-no-load"),
            cwd: temp("planbridge-no-load-cwd-"),
            mode: "default",
            resumeNativeSessionId: "scripted-cursor-session-1",
            emit: () => Effect.void
          })
        )
      )
      expect(error.kind).toBe("unsupported")
    })

    it("thread.resume after a restart answers unsupported, and the thread stays readable", async () => {
      const dataDir = temp("planbridge-no-load-data-")
      const cwd = temp("planbridge-no-load-cwd-")
      const start = () =>
        startServer({
          dataDir,
          host: "127.0.0.1",
          port: 0,
          logLevel: "silent",
          providers: [{ adapter, capabilities: profile.capabilities }]
        })
      let server: RunningServer = await start()
      let threadId: string
      try {
        const a = await connect({ url: server.url, token: server.token })
        ;({ threadId } = resultOf(
          await a.command({ type: "session.start", provider: "cursor", cwd, mode: "default" })
        ) as {
          threadId: string
        })
        resultOf(await a.command({ type: "thread.subscribe", threadId: threadId as never, afterSeq: 0 }))
        const configured = await a.waitFor(isEvent("session.configured", threadId))
        expect(
          configured.event.type === "session.configured" && configured.event.payload.capabilities.supportsResume
        ).toBe(false)
        await a.close()
      } finally {
        await server.close()
      }
      server = await start()
      try {
        const b = await connect({ url: server.url, token: server.token })
        const refusedTurn = errorOf(await b.command({ type: "turn.start", threadId: threadId as never, text: "hi" }))
        expect(refusedTurn.code).toBe("session_not_live")
        expect(refusedTurn.message).not.toContain("thread.resume")
        const refused = errorOf(await b.command({ type: "thread.resume", threadId: threadId as never }))
        expect(refused.code).toBe("unsupported")
        expect(refused.message).toContain("supportsResume is false")
        resultOf(await b.command({ type: "thread.subscribe", threadId: threadId as never }))
        await b.waitFor((f) => f.type === "snapshot")
        await b.close()
      } finally {
        await server.close()
      }
    })
  }
)

describe("an ACP agent that offers session/load but not session/resume (the scripted Cursor-profile agent)", () => {
  it("is taken up with session/load, its replayed history counted, not re-emitted", async () => {
    const lines: Array<TranscriptEntry> = []
    const profile = cursorProfile({
      command: resolve(root, "node_modules/.bin/tsx"),
      args: [resolve(root, "apps/server/test/provider/acp/scriptedCursorAgent.ts")]
    })
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, CURSOR_API_KEY: "test-key" }
    const adapter = makeAcpAdapter(profile, { env, tap: (line) => lines.push(line) })
    const open = await openSession(adapter, {
      threadId: ThreadId.make("thread-load-only"),
      cwd: temp("planbridge-load-only-cwd-"),
      mode: "default",
      resumeNativeSessionId: "scripted-cursor-session-1"
    })
    try {
      expect(open.log.ofType("session.started")[0]?.payload).toMatchObject({ resumed: true })
      expect(sentMethods(lines)).toContain("session/load")
      expect(sentMethods(lines)).not.toContain("session/resume")
      expect(open.log.ofType("runtime.warning").map((e) => e.payload.code)).toContain("history_not_mapped")
    } finally {
      await open.close()
    }
  })
})
