import type { ResolvedBy, RuntimeEvent } from "@planbridge/contracts"
import { mkdtempSync, rmSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { stopServe, type ServeProcess } from "../chaos/rig.ts"
import { askTwoQuestions } from "../provider/codex/realPeerSupport.ts"
import { runCli } from "../cli/support/runCli.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { startMockResponsesModel, type MockResponsesModel } from "../support/mockResponsesModel.ts"
import { crashProviders, resultOf, serve, serveEnv, sigkill, waitEvent, type EventFrame } from "../support/resumeRig.ts"
import { connect, type TestClient } from "../support/wsClient.ts"

/**
 * Issue 29, who resolved what: `planbridge serve` (a child process, so that it can be SIGKILLed)
 * with the real `codex app-server` 0.171.0 behind it, its model scripted on loopback. One thread
 * asks a question per turn, and each ends another way: a browser on the WebSocket, the CLI, a
 * program on the operator API, a notification's action, an interrupt, the provider's exit, the
 * server's restart.
 * Each resolution records its actor and channel in the event, the snapshot and the operator API,
 * and `planbridge prompts audit --json` lists them in log order.
 */
const BROWSER = "browser-7f3e2a"
const started = Date.now()

let mock: MockResponsesModel
let dataDir: string
let cwd: string
let env: Record<string, string>
let server: ServeProcess
let threadId: string

beforeAll(async () => {
  assertLoopbackOnly()
  mock = await startMockResponsesModel()
  dataDir = mkdtempSync(join(tmpdir(), "planbridge-provenance-"))
  cwd = mkdtempSync(join(tmpdir(), "planbridge-provenance-cwd-"))
  env = serveEnv({
    OPENAI_API_KEY: "sk-planbridge-provenance-test",
    PLANBRIDGE_CODEX_BASE_URL: mock.baseUrl,
    PLANBRIDGE_CODEX_MODEL: "gpt-5.5"
  })
  server = await serve(dataDir, env)
}, 120_000)

afterAll(async () => {
  if (server !== undefined) await stopServe(server)
  await crashProviders(dataDir).catch(() => 0)
  await mock?.close()
  for (const dir of [dataDir, cwd]) if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

const ANSWER = [
  { questionId: "db_choice", selectedOptionIds: ["opt-1"] },
  { questionId: "test_scope", selectedOptionIds: ["opt-0"] }
]

/** The operator API with the server's token and these headers. */
const api = (path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
  fetch(`${server.url}${path}`, {
    method: init.method ?? "GET",
    headers: {
      authorization: `Bearer ${server.token}`,
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      ...init.headers
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
  })

/**
 * Starts a turn whose model asks the two questions; resolves with the prompt's id once it is asked.
 * `answered`: the model gets the answer back and ends the turn (a question that dies with its
 * provider or its server never does, and its reply would be left for the next turn).
 */
const ask = async (browser: TestClient, answered = true): Promise<{ promptId: string; after: number }> => {
  const last = browser.frames.filter((f): f is EventFrame => f.type === "event" && f.threadId === threadId).at(-1)
  const after = last?.seq ?? 0
  if (answered) mock.script({ output: [askTwoQuestions] }, { output: [{ type: "text", text: "Noted." }] })
  else mock.script({ output: [askTwoQuestions] })
  resultOf(await browser.command({ type: "turn.start", threadId: threadId as never, text: "Ask me first." }))
  const asked = await waitEvent(browser, "user-input.requested", threadId, after, 90_000)
  if (asked.event.type !== "user-input.requested") throw new Error("unreachable")
  return { promptId: asked.event.payload.prompt.promptId, after: asked.seq }
}

/** The resolution events of the prompt (and its request) after `after`, once the turn is over. */
const resolutionOf = async (browser: TestClient, after: number) => {
  const resolved = await waitEvent(browser, "user-input.resolved", threadId, after, 90_000)
  await waitEvent(browser, "turn.completed", threadId, resolved.seq, 90_000)
  const events = browser.frames
    .filter((f): f is EventFrame => f.type === "event" && f.threadId === threadId && f.seq > after)
    .map((f) => f.event)
  const byOf = (type: RuntimeEvent["type"]) =>
    events.flatMap((e) =>
      e.type === type && (e.type === "user-input.resolved" || e.type === "request.resolved")
        ? [{ resolution: e.payload.resolution, resolvedBy: e.payload.resolvedBy }]
        : []
    )
  return { prompt: byOf("user-input.resolved"), request: byOf("request.resolved") }
}

const connectBrowser = (s: ServeProcess) => connect({ url: s.url, token: s.token, clientId: BROWSER })

describe("who resolved what, for every way a prompt ends", { timeout: 600_000 }, () => {
  /** Prompt id → the provenance its resolution must record, in the order they were resolved. */
  const expected: Array<{ readonly promptId: string; readonly resolution: string; readonly by: ResolvedBy }> = []

  it("a browser, the CLI, the operator API and a notification's action each record themselves", async () => {
    const browser = await connectBrowser(server)
    try {
      ;({ threadId } = resultOf(
        await browser.command({ type: "session.start", provider: "codex", cwd, mode: "plan" })
      ) as { threadId: string })
      resultOf(await browser.command({ type: "thread.subscribe", threadId: threadId as never }))

      // 1. The page answers on its WebSocket: a person on this browser.
      const web = await ask(browser)
      resultOf(
        await browser.command({
          type: "userInput.respond",
          promptId: web.promptId as never,
          answers: ANSWER as never,
          clientRequestId: "web-1"
        })
      )
      const byWeb: ResolvedBy = { actor: "user", via: "ws", clientId: BROWSER }
      // The native request answered by the same reply shares the prompt's provenance.
      expect(await resolutionOf(browser, web.after)).toEqual({
        prompt: [{ resolution: "answered", resolvedBy: byWeb }],
        request: [{ resolution: "responded", resolvedBy: byWeb }]
      })
      expected.push({ promptId: web.promptId, resolution: "answered", by: byWeb })

      // 2. `planbridge prompts answer`: a person with the CLI of this host.
      const cli = await ask(browser)
      const run = await runCli(
        "prompts",
        "answer",
        cli.promptId,
        "--option",
        "db_choice=opt-0",
        "--option",
        "test_scope=opt-1",
        "--url",
        server.url,
        "--data-dir",
        dataDir
      )
      expect(run).toMatchObject({ code: 0, stderr: "" })
      const byCli: ResolvedBy = { actor: "user", via: "cli", clientId: `cli@${hostname()}` }
      expect((await resolutionOf(browser, cli.after)).prompt).toEqual([{ resolution: "answered", resolvedBy: byCli }])
      expected.push({ promptId: cli.promptId, resolution: "answered", by: byCli })

      // 3. A program on the operator API (no `planbridge-via`): the operator.
      const program = await ask(browser)
      const cancelled = await api(`/api/prompts/${encodeURIComponent(program.promptId)}/cancel`, {
        method: "POST",
        body: {}
      })
      expect(cancelled.status).toBe(200)
      const byApi: ResolvedBy = { actor: "operator", via: "api" }
      expect((await resolutionOf(browser, program.after)).prompt).toEqual([
        { resolution: "cancelled", resolvedBy: byApi }
      ])
      expected.push({ promptId: program.promptId, resolution: "cancelled", by: byApi })

      // 4. A notification's action answers through the operator API as `push`, with the device's id.
      const push = await ask(browser)
      const headers = { "planbridge-via": "push", "planbridge-client-id": BROWSER }
      // A header with a value it cannot have is refused, naming it; nothing is answered.
      const refused = await api(`/api/prompts/${encodeURIComponent(push.promptId)}/answer`, {
        method: "POST",
        body: { answers: ANSWER, clientRequestId: "push-1" },
        headers: { ...headers, "planbridge-via": "pager" }
      })
      expect(refused.status).toBe(400)
      expect(await refused.json()).toMatchObject({
        error: { code: "invalid_frame", message: expect.stringContaining("planbridge-via") }
      })
      const answered = await api(`/api/prompts/${encodeURIComponent(push.promptId)}/answer`, {
        method: "POST",
        body: { answers: ANSWER, clientRequestId: "push-1" },
        headers
      })
      expect(answered.status).toBe(200)
      const byPush: ResolvedBy = { actor: "user", via: "push", clientId: BROWSER }
      expect((await resolutionOf(browser, push.after)).prompt).toEqual([{ resolution: "answered", resolvedBy: byPush }])
      expected.push({ promptId: push.promptId, resolution: "answered", by: byPush })

      // 5. The browser interrupts the turn while it asks: the cancelled question is the browser's, not the provider's.
      const interrupted = await ask(browser, false)
      resultOf(await browser.command({ type: "turn.interrupt", threadId: threadId as never }))
      const byInterrupt: ResolvedBy = { actor: "user", via: "ws", clientId: BROWSER }
      expect((await resolutionOf(browser, interrupted.after)).prompt).toEqual([
        { resolution: "cancelled", resolvedBy: byInterrupt }
      ])
      expected.push({ promptId: interrupted.promptId, resolution: "cancelled", by: byInterrupt })

      // The operator API and a new subscriber's snapshot keep what the events say.
      const detail = (await (await api(`/api/prompts/${encodeURIComponent(push.promptId)}`)).json()) as {
        resolvedBy: unknown
      }
      expect(detail.resolvedBy).toEqual(byPush)
      const reader = await connect({ url: server.url, token: server.token })
      try {
        await reader.command({ type: "thread.subscribe", threadId: threadId as never })
        const snapshot = await reader.waitFor(
          (f): f is Extract<typeof f, { type: "snapshot" }> => f.type === "snapshot" && f.threadId === threadId
        )
        const byPrompt = new Map(snapshot.snapshot.prompts.map((p) => [p.promptId as string, p.resolvedBy]))
        for (const { promptId, by } of expected) expect(byPrompt.get(promptId), promptId).toEqual(by)
        for (const request of snapshot.snapshot.requests) expect(request.resolvedBy).not.toBeNull()
      } finally {
        await reader.close()
      }
    } finally {
      await browser.close()
    }
  })

  it("the provider's exit is the provider's; a restart's recovery is the server's; the audit lists all in order", async () => {
    let browser = await connectBrowser(server)
    try {
      resultOf(await browser.command({ type: "thread.subscribe", threadId: threadId as never, afterSeq: 0 }))
      // 5. The app-server dies while its question waits.
      const exit = await ask(browser, false)
      expect(await crashProviders(dataDir)).toBeGreaterThan(0)
      const exited = await waitEvent(browser, "user-input.resolved", threadId, exit.after, 90_000)
      expect(exited.event.payload).toMatchObject({ resolution: "provider_exited", resolvedBy: { actor: "provider" } })
      expected.push({ promptId: exit.promptId, resolution: "provider_exited", by: { actor: "provider" } })
      await waitEvent(browser, "session.exited", threadId, exit.after, 90_000)

      // 6. Resumed, it asks again, and the server is SIGKILLed: the next one's recovery closes it.
      resultOf(await browser.command({ type: "thread.resume", threadId: threadId as never }))
      const restart = await ask(browser, false)
      await browser.close()
      await sigkill(server)
      await crashProviders(dataDir)
      server = await serve(dataDir, env)
      browser = await connectBrowser(server)
      resultOf(await browser.command({ type: "thread.subscribe", threadId: threadId as never, afterSeq: 0 }))
      const recovered = await waitEvent(browser, "user-input.resolved", threadId, restart.after, 90_000)
      expect(recovered.event.payload).toMatchObject({
        resolution: "server_restarted",
        resolvedBy: { actor: "server" }
      })
      expected.push({ promptId: restart.promptId, resolution: "server_restarted", by: { actor: "server" } })

      // The trail, as the CLI exports it: every prompt's resolution, in the order they happened.
      const audit = await runCli("prompts", "audit", "--json", "--url", server.url, "--data-dir", dataDir)
      expect(audit).toMatchObject({ code: 0, stderr: "" })
      const { resolutions } = JSON.parse(audit.stdout) as {
        resolutions: Array<{ seq: number; target: string; id: string; resolution: string; resolvedBy: unknown }>
      }
      const prompts = resolutions.filter((r) => r.target === "prompt" && r.id !== undefined)
      expect(prompts.map((r) => ({ promptId: r.id, resolution: r.resolution, by: r.resolvedBy }))).toEqual(expected)
      const seqs = resolutions.map((r) => r.seq)
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
      // Every request resolved too, none without its provenance; never an answer in the trail.
      expect(resolutions.filter((r) => r.target === "request")).toHaveLength(expected.length)
      expect(resolutions.every((r) => r.resolvedBy !== null)).toBe(true)
      expect(audit.stdout).not.toContain("selectedOptionIds")
      // `--since` keeps only what came at or after it.
      const since = new Date(started).toISOString()
      const later = await runCli(
        "prompts",
        "audit",
        "--json",
        "--since",
        since,
        "--url",
        server.url,
        "--data-dir",
        dataDir
      )
      expect(JSON.parse(later.stdout)).toEqual({ resolutions })
      const none = await runCli(
        "prompts",
        "audit",
        "--since",
        new Date(Date.now() + 60_000).toISOString(),
        "--url",
        server.url,
        "--data-dir",
        dataDir
      )
      expect(none).toEqual({ code: 0, stdout: "no resolutions\n", stderr: "" })
    } finally {
      await browser.close()
    }
  })
})
