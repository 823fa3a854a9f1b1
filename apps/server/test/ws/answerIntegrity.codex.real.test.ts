import type { Command, ServerFrame } from "@planbridge/contracts"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type RunningServer } from "../../src/http/HttpServer.ts"
import { makeCodexAdapter } from "../../src/provider/codex/CodexAdapter.ts"
import { codexCapabilities } from "../../src/provider/codex/CodexMappingState.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import {
  functionCallOutputs,
  startMockResponsesModel,
  type MockResponsesModel,
  type ScriptedOutput
} from "../support/mockResponsesModel.ts"
import { planReply } from "../provider/codex/realPeerSupport.ts"
import { connect, isEvent, type TestClient } from "../support/wsClient.ts"

/**
 * Issue 10, "what the server records is what the agent got", over the WebSocket against the
 * real `codex app-server` 0.171.0 (model scripted on loopback): a mode Codex does not offer is
 * refused at every door, a mode switch is refused while a turn runs (so `mode.changed` never
 * states a mode that is not in effect), and a reused `clientRequestId` never passes off another
 * command's outcome as this one's.
 */
let mock: MockResponsesModel
let server: RunningServer
let dataDir: string
let cwd: string
const clients: Array<TestClient> = []
const started = Date.now()

const startCodexServer = () =>
  startServer({
    dataDir,
    host: "127.0.0.1",
    port: 0,
    logLevel: "silent",
    providers: [
      {
        adapter: makeCodexAdapter({
          model: "gpt-5.5",
          baseUrl: mock.baseUrl,
          envKey: "PLANBRIDGE_MOCK_KEY",
          apiKey: "mock-key"
        }),
        capabilities: codexCapabilities
      }
    ]
  })

beforeAll(async () => {
  assertLoopbackOnly()
  dataDir = mkdtempSync(join(tmpdir(), "planbridge-integrity-"))
  cwd = mkdtempSync(join(tmpdir(), "planbridge-integrity-cwd-"))
  mock = await startMockResponsesModel()
  server = await startCodexServer()
})

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()))
  await server?.close()
  await mock?.close()
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(cwd, { recursive: true, force: true })
  console.info(`answerIntegrity.codex.real.test.ts wall time: ${Date.now() - started} ms`)
})

const client = async () => {
  const c = await connect({ url: server.url, token: server.token })
  clients.push(c)
  return c
}

const ok = async (c: TestClient, command: Command) => {
  const reply = await c.command(command)
  if (reply.type === "error") throw new Error(`${command.type}: ${reply.error.code}: ${reply.error.message}`)
  return reply.result as Record<string, unknown>
}

const refused = async (c: TestClient, command: Command) => {
  const reply = await c.command(command)
  if (reply.type !== "error") throw new Error(`${command.type} was accepted: ${JSON.stringify(reply.result)}`)
  return reply.error
}

const startThread = async (c: TestClient, mode: "plan" | "default") => {
  const { threadId } = (await ok(c, { type: "session.start", provider: "codex", cwd, mode })) as { threadId: string }
  await ok(c, { type: "thread.subscribe", threadId: threadId as never })
  return threadId as never
}

const threadIds = async (c: TestClient) =>
  ((await ok(c, { type: "threads.list" })).threads as Array<{ threadId: string }>).map((t) => t.threadId)

const eventsOf = (c: TestClient, threadId: string, type: string) =>
  c.frames.filter((f): f is ServerFrame & { type: "event" } => isEvent(type, threadId)(f))

const ask = (id: string): ScriptedOutput => ({
  type: "function_call",
  name: "request_user_input",
  callId: `call_${id}`,
  arguments: {
    questions: [
      {
        id,
        header: "Database",
        question: "Which database should the service use?",
        options: [
          { label: "PostgreSQL (Recommended)", description: "Relational." },
          { label: "SQLite", description: "Embedded." }
        ]
      }
    ]
  }
})

/** GET on the operator API. */
const api = async <T>(path: string): Promise<T> => {
  const res = await fetch(`${server.url}/api${path}`, { headers: { authorization: `Bearer ${server.token}` } })
  return (await res.json()) as T
}

const promptFrom = (frame: ServerFrame & { type: "event" }) => {
  if (frame.event.type !== "user-input.requested") throw new Error("not a question")
  return frame.event.payload.prompt.promptId
}

describe("answer integrity over WebSocket with the real Codex app-server", () => {
  it("a mode the provider lacks is refused unsupported alike by session.start, turn.start and mode.set", async () => {
    const c = await client()
    const before = await threadIds(c)
    for (const mode of ["ask", "execute", "unknown"] as const) {
      const atStart = await refused(c, { type: "session.start", provider: "codex", cwd, mode })
      expect(atStart.code, `session.start ${mode}`).toBe("unsupported")
    }
    // Refused before anything ran: no thread was created, nothing claims to be in "ask".
    expect(await threadIds(c)).toEqual(before)

    const threadId = await startThread(c, "plan")
    for (const mode of ["ask", "execute", "unknown"] as const) {
      const atStart = await refused(c, { type: "session.start", provider: "codex", cwd, mode })
      const atTurn = await refused(c, { type: "turn.start", threadId, text: "Plan it.", mode })
      const atSet = await refused(c, { type: "mode.set", threadId, mode })
      // One rule, one answer: the same code and message whichever command asked.
      expect([atTurn, atSet], `mode ${mode}`).toEqual([atStart, atStart])
    }
    expect(eventsOf(c, threadId, "mode.changed")).toEqual([])
    expect(eventsOf(c, threadId, "turn.started")).toEqual([])
    expect((await api<{ mode: string }>(`/threads/${threadId}`)).mode).toBe("plan")
  })

  it("a mode switch while a turn runs is refused busy; mode.changed only states the mode in effect", async () => {
    const c = await client()
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    const requestsBefore = mock.responseRequests().length
    mock.script({ output: [planReply], gate })
    const threadId = await startThread(c, "plan")
    await ok(c, { type: "turn.start", threadId, text: "Plan a small HTTP service for me." })
    await c.waitFor(isEvent("turn.started", threadId))
    // The model is mid-response: the plan turn runs in plan mode.
    await mock.waitForResponseRequests(requestsBefore + 1)

    const set = await refused(c, { type: "mode.set", threadId, mode: "default" })
    expect(set.code).toBe("busy")
    const steer = await refused(c, { type: "turn.start", threadId, text: "Just do it.", mode: "default" })
    expect(steer.code).toBe("busy")
    // Switching to the mode already in effect is no switch: accepted, and nothing is published.
    expect(await ok(c, { type: "mode.set", threadId, mode: "plan" })).toEqual({ mode: "plan" })

    release()
    const plan = await c.waitFor(isEvent("plan.proposed.completed", threadId))
    const completed = await c.waitFor(isEvent("turn.completed", threadId))
    expect(completed.event.type === "turn.completed" && completed.event.payload.status).toBe("completed")
    expect(eventsOf(c, threadId, "mode.changed")).toEqual([])
    const started = eventsOf(c, threadId, "turn.started")
    expect(started.map((f) => f.event.type === "turn.started" && f.event.payload.mode)).toEqual(["plan"])
    // Nothing was steered into the running turn: the model got exactly one request.
    expect(mock.responseRequests().length).toBe(requestsBefore + 1)

    // Between turns the switch is accepted and published as the mode now in effect.
    expect(await ok(c, { type: "mode.set", threadId, mode: "default" })).toEqual({ mode: "default" })
    const changed = await c.waitFor(isEvent("mode.changed", threadId))
    expect(changed.seq).toBeGreaterThan(plan.seq)
    const payload = changed.event.type === "mode.changed" && changed.event.payload
    expect(payload).toEqual({ mode: "default", nativeMode: "default" })
  })

  it("a clientRequestId reused on anything else is a conflict; an identical retry gets its outcome", async () => {
    const c = await client()
    const requestsBefore = mock.responseRequests().length
    mock.script(
      { output: [ask("first_db")] },
      { output: [{ type: "text", text: "Noted." }] },
      { output: [ask("second_db")] },
      { output: [{ type: "text", text: "Noted again." }] }
    )
    const threadId = await startThread(c, "plan")
    await ok(c, { type: "turn.start", threadId, text: "Ask me." })
    const first = promptFrom(await c.waitFor(isEvent("user-input.requested", threadId)))
    const answer = { type: "userInput.respond", promptId: first, clientRequestId: "shared-id" } as const
    const sqlite = [{ questionId: "first_db", selectedOptionIds: ["opt-1"] }] as never
    expect(await ok(c, { ...answer, answers: sqlite })).toEqual({ promptId: first, status: "resolved" })
    // The identical command again: its first outcome, nothing sent twice.
    expect(await ok(c, { ...answer, answers: sqlite })).toEqual({ promptId: first, status: "resolved" })
    // The same id with another answer, or another command, is a conflict that names the first use.
    const postgres = [{ questionId: "first_db", selectedOptionIds: ["opt-0"] }] as never
    const otherAnswer = await refused(c, { ...answer, answers: postgres })
    expect(otherAnswer.code).toBe("client_request_conflict")
    expect(otherAnswer.message).toContain(`userInput.respond on '${first}'`)
    const dismiss = await refused(c, {
      type: "userInput.dismiss",
      promptId: first,
      resolution: "empty",
      clientRequestId: "shared-id"
    })
    expect(dismiss.code).toBe("client_request_conflict")
    await c.waitFor(isEvent("turn.completed", threadId))

    await ok(c, { type: "turn.start", threadId, text: "Ask me again." })
    const secondFrame = await c.waitFor(
      (f): f is ServerFrame & { type: "event" } =>
        isEvent("user-input.requested", threadId)(f) && promptFrom(f) !== first
    )
    const second = promptFrom(secondFrame)
    const secondAnswer = [{ questionId: "second_db", selectedOptionIds: ["opt-0"] }] as never
    const reused = await refused(c, { ...answer, promptId: second, answers: secondAnswer })
    expect(reused).toMatchObject({ code: "client_request_conflict" })
    expect(reused.message).toContain(`userInput.respond on '${first}'`)
    // The new prompt is untouched: still pending, and answerable with a fresh id.
    expect((await api<{ status: string }>(`/prompts/${second}`)).status).toBe("pending")
    expect(eventsOf(c, threadId, "user-input.resolved")).toHaveLength(1)
    const fresh = { ...answer, promptId: second, clientRequestId: "fresh-id", answers: secondAnswer }
    expect(await ok(c, fresh)).toEqual({ promptId: second, status: "resolved" })
    await c.waitFor(
      (f): f is ServerFrame & { type: "event" } => isEvent("turn.completed", threadId)(f) && f.seq > secondFrame.seq
    )

    // Each prompt's answer reached the model exactly once, as given.
    const requests = await mock.waitForResponseRequests(requestsBefore + 4)
    expect(JSON.parse(String(functionCallOutputs(requests[requestsBefore + 1]!).at(-1)!.output))).toEqual({
      answers: { first_db: { answers: ["SQLite"] } }
    })
    expect(JSON.parse(String(functionCallOutputs(requests[requestsBefore + 3]!).at(-1)!.output))).toEqual({
      answers: { second_db: { answers: ["PostgreSQL (Recommended)"] } }
    })

    // The outcomes and what they were for are stored: after a restart the identical retry still
    // gets its first outcome and the conflicting reuse is still refused.
    await Promise.all(clients.splice(0).map((x) => x.close()))
    await server.close()
    server = await startCodexServer()
    const d = await client()
    expect(await ok(d, { ...answer, answers: sqlite })).toEqual({ promptId: first, status: "resolved" })
    const again = await refused(d, { ...answer, promptId: second, answers: secondAnswer })
    expect(again.code).toBe("client_request_conflict")
    expect(await ok(d, fresh)).toEqual({ promptId: second, status: "resolved" })
  })
})
