import type { ServerFrame } from "@planbridge/contracts"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type RunningServer } from "../../src/http/HttpServer.ts"
import { makeAcpAdapter } from "../../src/provider/acp/AcpAdapter.ts"
import { cursorProfile } from "../../src/provider/acp/profiles/cursor.ts"
import { makeCodexAdapter } from "../../src/provider/codex/CodexAdapter.ts"
import { codexCapabilities } from "../../src/provider/codex/CodexMappingState.ts"
import { MAX_LINE_BYTES } from "../../src/provider/lines.ts"
import { connect, isEvent, type TestClient } from "../support/wsClient.ts"

/**
 * Issue 13, item 2: a provider line over the transports' one line bound (32 MiB) used to freeze
 * the session silently (ACP: the turn waited for ever on a request nobody could answer) or was
 * read whole, however long (Codex). Now it is a fatal `runtime.error` naming the bound, the
 * session ends `crashed`, and the thread is consistent: not live, no turn running, commands
 * answer `session_not_live`. Each stand-in writes a 33 MiB request and then waits for its answer.
 *
 * Issue 31, item 4: the next session on the same server then failed its `initialize`
 * ("the provider process has exited"): every ACP session read its agent's stdout through one
 * line splitter shared by the whole process, still holding the abandoned line, so the next
 * agent's first line was counted as the rest of it, over the bound, and that agent was killed.
 * Each case therefore starts the next session of the same provider and runs a turn through it.
 */
const root = fileURLToPath(new URL("../../../../", import.meta.url))
const fakeAppServer = resolve(root, "apps/server/test/provider/codex/fakeAppServer.mjs")
let server: RunningServer
const dirs: Array<string> = []
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(dir)
  return dir
}

beforeAll(async () => {
  const profile = cursorProfile({
    command: resolve(root, "node_modules/.bin/tsx"),
    args: [resolve(root, "apps/server/test/provider/acp/scriptedCursorAgent.ts")]
  })
  const cursorEnv = { PATH: process.env.PATH, HOME: process.env.HOME, CURSOR_API_KEY: "test-key" }
  const codex = makeCodexAdapter({
    model: "fake-model",
    baseUrl: "http://127.0.0.1:9/v1",
    envKey: "PLANBRIDGE_MOCK_KEY",
    apiKey: "mock-key",
    command: { command: process.execPath, args: [fakeAppServer] }
  })
  server = await startServer({
    dataDir: tempDir("planbridge-line-bound-"),
    host: "127.0.0.1",
    port: 0,
    logLevel: "silent",
    providers: [
      { adapter: makeAcpAdapter(profile, { env: cursorEnv }), capabilities: profile.capabilities },
      { adapter: codex, capabilities: codexCapabilities }
    ]
  })
})
afterAll(async () => {
  await server?.close()
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
})

const ok = async (client: TestClient, command: Parameters<TestClient["command"]>[0]) => {
  const reply = await client.command(command)
  if (reply.type === "error") throw new Error(`${command.type}: ${reply.error.code}: ${reply.error.message}`)
  return reply.result as Record<string, unknown>
}

const eventOf = (frame: ServerFrame & { type: "event" }) => frame.event

/** Drives one session into the huge line and checks everything a client can see afterwards. */
const hugeLineEndsTheSession = async (provider: "cursor" | "codex", text: string, code: string) => {
  const client = await connect({ url: server.url, token: server.token })
  try {
    const cwd = tempDir("planbridge-line-bound-cwd-")
    const started = await ok(client, { type: "session.start", provider, cwd, mode: "default" })
    const threadId = started.threadId as string
    await ok(client, { type: "thread.subscribe", threadId: threadId as never })
    const turnId = (await ok(client, { type: "turn.start", threadId: threadId as never, text })).turnId as string

    const error = eventOf(await client.waitFor(isEvent("runtime.error", threadId), 8_000))
    expect(error.type === "runtime.error" && error.payload).toMatchObject({ code, fatal: true })
    const bound = `${MAX_LINE_BYTES} bytes`
    expect(error.type === "runtime.error" && error.payload.message).toContain(bound)

    const completed = eventOf(await client.waitFor(isEvent("turn.completed", threadId), 8_000))
    expect(completed.type === "turn.completed" && completed.turnId).toBe(turnId)
    expect(completed.type === "turn.completed" && completed.payload.status).toBe("failed")
    expect(completed.type === "turn.completed" && completed.payload.error?.message).toContain(bound)
    const exited = eventOf(await client.waitFor(isEvent("session.exited", threadId), 8_000))
    expect(exited.type === "session.exited" && exited.payload.exitKind).toBe("crashed")
    expect(exited.type === "session.exited" && exited.payload.message).toContain(bound)

    // Retired right after the exit is persisted; the event may reach us a moment before that.
    const live = async () =>
      ((await ok(client, { type: "threads.list" })).threads as Array<{ threadId: string; live: boolean }>).find(
        (t) => t.threadId === threadId
      )?.live
    const deadline = Date.now() + 5_000
    while ((await live()) !== false && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    expect(await live()).toBe(false)
    const interrupt = await client.command({ type: "turn.interrupt", threadId: threadId as never })
    expect(interrupt.type === "error" && interrupt.error.code).toBe("session_not_live")
    const again = await client.command({ type: "turn.start", threadId: threadId as never, text: "again" })
    expect(again.type === "error" && again.error.code).toBe("session_not_live")

    const snapshot = (await (
      await fetch(`${server.url}/api/threads/${threadId}`, { headers: { authorization: `Bearer ${server.token}` } })
    ).json()) as { state: string; turns: Array<{ status: string }>; prompts: Array<{ status: string }> }
    expect(snapshot.state).toBe("stopped")
    expect(snapshot.turns.map((t) => t.status)).toEqual(["failed"])
    expect(snapshot.prompts.filter((p) => p.status === "pending")).toEqual([])
  } finally {
    await client.close()
  }
}

/** The session after one ended by the bound: it starts, answers a turn, and reads its lines whole. */
const nextSessionAnswers = async (provider: "cursor" | "codex", text: string, reply: string) => {
  const client = await connect({ url: server.url, token: server.token })
  try {
    const cwd = tempDir("planbridge-line-bound-next-")
    const started = await ok(client, { type: "session.start", provider, cwd, mode: "default" })
    const threadId = started.threadId as string
    await ok(client, { type: "thread.subscribe", threadId: threadId as never })
    const turnId = (await ok(client, { type: "turn.start", threadId: threadId as never, text })).turnId as string
    const completed = eventOf(await client.waitFor(isEvent("turn.completed", threadId), 8_000))
    expect(completed.type === "turn.completed" && completed.turnId).toBe(turnId)
    expect(completed.type === "turn.completed" && completed.payload.status).toBe("completed")
    const said = client.frames
      .filter(isEvent("content.delta", threadId))
      .map(eventOf)
      .flatMap((e) => (e.type === "content.delta" ? [e.payload.delta] : []))
      .join("")
    expect(said).toContain(reply)
    expect(client.frames.filter(isEvent("runtime.error", threadId))).toEqual([])
  } finally {
    await client.close()
  }
}

describe("a provider line over the 32 MiB line bound", () => {
  it("Cursor (ACP): a runtime.error naming the bound, the session ends crashed, the thread is consistent, the next session works", async () => {
    await hugeLineEndsTheSession("cursor", "SCENARIO:HUGE_REQUEST", "line_too_long")
    await nextSessionAnswers("cursor", "SCENARIO:PLAN_ONLY", "Plan done.")
  }, 30_000)

  it("Codex: a runtime.error naming the bound, the session ends crashed, the thread is consistent, the next session works", async () => {
    await hugeLineEndsTheSession("codex", "[[HUGE]] ask", "codex.line_too_long")
    await nextSessionAnswers("codex", "hello", "still here")
  }, 30_000)
})
