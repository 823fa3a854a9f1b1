import type { ServerFrame } from "@planbridge/contracts"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { main } from "../../src/cli/main.ts"
import { startServer, type RunningServer } from "../../src/http/HttpServer.ts"
import { makeCodexAdapter } from "../../src/provider/codex/CodexAdapter.ts"
import { codexCapabilities } from "../../src/provider/codex/CodexMappingState.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { functionCallOutputs, startMockResponsesModel, type MockResponsesModel } from "../support/mockResponsesModel.ts"
import { askTwoQuestions, PLAN_MARKDOWN, planReply } from "../provider/codex/realPeerSupport.ts"
import { connect, isEvent, type TestClient } from "../support/wsClient.ts"

/**
 * Planbridge as users run it: the real server (fastify + WebSocket + SQLite file) driving a real
 * `codex app-server` whose model is scripted on loopback, with real `ws` clients.
 */
let mock: MockResponsesModel
let server: RunningServer
let dataDir: string
let cwd: string
const started = Date.now()

beforeAll(async () => {
  assertLoopbackOnly()
  dataDir = mkdtempSync(join(tmpdir(), "planbridge-e2e-"))
  cwd = mkdtempSync(join(tmpdir(), "planbridge-e2e-cwd-"))
  mock = await startMockResponsesModel()
  server = await startCodexServer()
})

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

afterAll(async () => {
  await server?.close()
  await mock?.close()
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(cwd, { recursive: true, force: true })
  console.info(`server.codex.real.test.ts wall time: ${Date.now() - started} ms`)
})

/** The `planbridge` CLI, run in this process with the server's token, capturing its output. */
const runCli = async (...args: Array<string>) => {
  const out: Array<string> = []
  const err: Array<string> = []
  const write = { stdout: process.stdout.write, stderr: process.stderr.write }
  process.env.PLANBRIDGE_TOKEN = server.token
  process.stdout.write = ((chunk: string | Uint8Array) => (
    out.push(String(chunk)),
    true
  )) as typeof process.stdout.write
  process.stderr.write = ((chunk: string | Uint8Array) => (
    err.push(String(chunk)),
    true
  )) as typeof process.stderr.write
  try {
    return { code: await main(args), stdout: out.join(""), stderr: err.join("") }
  } finally {
    process.stdout.write = write.stdout
    process.stderr.write = write.stderr
    delete process.env.PLANBRIDGE_TOKEN
  }
}

const resultOf = (frame: ServerFrame & { type: "result" | "error" }) => {
  if (frame.type === "error") throw new Error(`command failed: ${frame.error.code}: ${frame.error.message}`)
  return frame.result as Record<string, unknown>
}

describe("server end to end with the real Codex app-server", () => {
  it("a plan-mode session: two clients see the question, exactly one answer wins, both see the resolution and the plan", async () => {
    const a = await connect({ url: server.url, token: server.token })
    const b = await connect({ url: server.url, token: server.token, tokenInHello: true })
    const clients: Array<TestClient> = [a, b]
    try {
      const welcome = a.frames.find((f) => f.type === "welcome")
      expect(welcome?.type === "welcome" && welcome.providers.map((p) => p.provider)).toEqual(["codex"])

      mock.script({ output: [askTwoQuestions] }, { output: [planReply] })
      const { threadId } = resultOf(
        await a.command({ type: "session.start", provider: "codex", cwd, mode: "plan" })
      ) as { threadId: string }
      for (const c of clients) resultOf(await c.command({ type: "thread.subscribe", threadId: threadId as never }))
      resultOf(
        await a.command({ type: "turn.start", threadId: threadId as never, text: "Plan a small HTTP service for me." })
      )

      const [requestedA, requestedB] = await Promise.all(
        clients.map((c) => c.waitFor(isEvent("user-input.requested", threadId)))
      )
      expect(requestedB!.seq).toBe(requestedA!.seq)
      const event = requestedA!.event
      if (event.type !== "user-input.requested") throw new Error("unreachable")
      const promptId = event.payload.prompt.promptId
      const answers = [
        { questionId: "db_choice", selectedOptionIds: ["opt-1"] },
        { questionId: "test_scope", selectedOptionIds: ["opt-0"], text: "plus fuzzing" }
      ] as never

      // A bad answer is a typed error with the path; nothing reaches the provider.
      const bad = await a.command({
        type: "userInput.respond",
        promptId,
        answers: [{ questionId: "db_choice", selectedOptionIds: ["opt-9"] }] as never,
        clientRequestId: "bad-1"
      })
      expect(bad.type === "error" && bad.error).toMatchObject({
        code: "invalid_answer",
        path: ["answers", 0, "selectedOptionIds", 0]
      })

      // Two clients answer at once: exactly one wins.
      const [fromA, fromB] = await Promise.all([
        a.command({ type: "userInput.respond", promptId, answers, clientRequestId: "answer-a" }),
        b.command({ type: "userInput.respond", promptId, answers, clientRequestId: "answer-b" })
      ])
      const outcomes = [fromA!, fromB!].map((f) => (f.type === "result" ? "won" : f.error.code)).sort()
      expect(outcomes).toEqual(["already_resolved", "won"])
      const winner = fromA!.type === "result" ? { client: a, id: "answer-a" } : { client: b, id: "answer-b" }
      // A retry with the same clientRequestId gets the same outcome, and sends nothing again.
      const retry = await winner.client.command({
        type: "userInput.respond",
        promptId,
        answers,
        clientRequestId: winner.id
      })
      expect(retry.type).toBe("result")

      for (const c of clients) {
        const resolved = await c.waitFor(isEvent("user-input.resolved", threadId))
        expect(resolved.event.type === "user-input.resolved" && resolved.event.payload).toMatchObject({
          promptId,
          resolution: "answered"
        })
        const plan = await c.waitFor(isEvent("plan.proposed.completed", threadId))
        expect(plan.event.type === "plan.proposed.completed" && plan.event.payload.markdown).toBe(PLAN_MARKDOWN)
        await c.waitFor(isEvent("turn.completed", threadId))
      }
      // Both clients saw the same events, gap-free and in order.
      const seqsOf = (c: TestClient) =>
        c.frames.flatMap((f) => (f.type === "event" && f.threadId === threadId ? [f.seq] : []))
      expect(seqsOf(a)).toEqual(seqsOf(b))
      const first = seqsOf(a)[0]!
      expect(seqsOf(a)).toEqual(seqsOf(a).map((_, i) => first + i))

      // The model received exactly one answer, with exactly those labels.
      const requests = await mock.waitForResponseRequests(2)
      const outputs = functionCallOutputs(requests[1]!)
      expect(outputs).toHaveLength(1)
      expect(JSON.parse(String(outputs[0]!.output))).toEqual({
        answers: {
          db_choice: { answers: ["SQLite"] },
          test_scope: { answers: ["Unit only (Recommended)", "user_note: plus fuzzing"] }
        }
      })

      // Operators see it persisted, through the HTTP API.
      const res = await fetch(`${server.url}/api/prompts/${promptId}`, {
        headers: { authorization: `Bearer ${server.token}` }
      })
      expect(res.status).toBe(200)
      const detail = (await res.json()) as {
        status: string
        resolution: string
        answers: unknown
        raw: { method?: string } | null
      }
      expect(detail).toMatchObject({ status: "resolved", resolution: "answered", answers })
      expect(detail.raw?.method).toBe("item/tool/requestUserInput")
      const thread = (await (
        await fetch(`${server.url}/api/threads/${threadId}`, { headers: { authorization: `Bearer ${server.token}` } })
      ).json()) as {
        proposedPlans: Array<{ markdown: string }>
        prompts: Array<{ status: string }>
      }
      expect(thread.proposedPlans.map((p) => p.markdown)).toEqual([PLAN_MARKDOWN])
      expect(thread.prompts.map((p) => p.status)).toEqual(["resolved"])

      // An operator answers the next question from the command line, through the same server.
      mock.script({ output: [askTwoQuestions] }, { output: [{ type: "text", text: "Noted." }] })
      resultOf(
        await a.command({ type: "turn.start", threadId: threadId as never, text: "Ask me again.", mode: "default" })
      )
      const second = await a.waitFor(
        (f): f is ServerFrame & { type: "event" } =>
          isEvent("user-input.requested", threadId)(f) && f.seq > requestedA!.seq
      )
      const secondPromptId = second.event.type === "user-input.requested" ? second.event.payload.prompt.promptId : ""
      const cli = (...args: Array<string>) => runCli("prompts", ...args, "--url", server.url)
      const listed = await cli("list", "--status", "pending", "--json")
      expect(listed.code).toBe(0)
      expect(
        (JSON.parse(listed.stdout) as { prompts: Array<{ promptId: string }> }).prompts.map((p) => p.promptId)
      ).toEqual([secondPromptId])
      const table = await cli("list", "--status", "pending")
      expect(table.stdout).toContain(secondPromptId)
      expect(table.stdout).toContain("Which database should the service use?")
      const refused = await cli("answer", secondPromptId, "--option", "db_choice=opt-7", "--option", "test_scope=opt-0")
      expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining("invalid_answer") })
      const answered = await cli(
        "answer",
        secondPromptId,
        "--option",
        "db_choice=opt-0",
        "--option",
        "test_scope=opt-1",
        "--text",
        "test_scope=fast please"
      )
      expect(answered).toMatchObject({ code: 0, stdout: `answered ${secondPromptId}\n` })
      await a.waitFor(
        (f): f is ServerFrame & { type: "event" } => isEvent("user-input.resolved", threadId)(f) && f.seq > second.seq
      )
      const third = await mock.waitForResponseRequests(4)
      expect(JSON.parse(String(functionCallOutputs(third[3]!).at(-1)!.output))).toEqual({
        answers: {
          db_choice: { answers: ["PostgreSQL (Recommended)"] },
          test_scope: { answers: ["Unit + integration", "user_note: fast please"] }
        }
      })
      const shown = await cli("show", secondPromptId, "--json")
      expect(JSON.parse(shown.stdout)).toMatchObject({ status: "resolved", resolution: "answered" })
      expect(await cli("cancel", secondPromptId)).toMatchObject({
        code: 1,
        stderr: expect.stringContaining("already_resolved")
      })

      // After a server restart, a retry of the winning answer still gets its first outcome
      // (stored), while a new attempt is told the prompt is resolved.
      await Promise.all(clients.map((c) => c.close()))
      await server.close()
      server = await startCodexServer()
      const c = await connect({ url: server.url, token: server.token })
      clients.push(c)
      const retried = await c.command({ type: "userInput.respond", promptId, answers, clientRequestId: winner.id })
      expect(retried).toMatchObject({ type: "result", result: { promptId, status: "resolved" } })
      const late = await c.command({ type: "userInput.respond", promptId, answers, clientRequestId: "after-restart" })
      expect(late.type === "error" && late.error.code).toBe("already_resolved")
    } finally {
      await Promise.all(clients.map((c) => c.close()))
    }
  })
})
