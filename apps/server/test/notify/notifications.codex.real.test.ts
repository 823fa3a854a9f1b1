import type { Command, NotificationMessage } from "@planbridge/contracts"
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type RunningServer } from "../../src/http/HttpServer.ts"
import { makeCodexAdapter } from "../../src/provider/codex/CodexAdapter.ts"
import { codexCapabilities } from "../../src/provider/codex/CodexMappingState.ts"
import { runCli } from "../cli/support/runCli.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { startMockResponsesModel, type MockResponsesModel, type ScriptedOutput } from "../support/mockResponsesModel.ts"
import { startPushService, startWebhookReceiver, type PushService } from "../support/pushService.ts"
import { connect, isEvent, type TestClient } from "../support/wsClient.ts"

/**
 * Issue 29, the notification outbox and its sinks, with the real `codex app-server` 0.171.0 and
 * its model scripted on loopback. A push service the test runs on loopback checks each Web Push
 * message's VAPID signature and decrypts it (aes128gcm) with the subscription's own keys: a
 * question notifies, its resolution replaces the notification under the same tag; a secret one
 * names only that a question waits. A webhook that fails is retried and every attempt recorded;
 * one that never answers delays nothing but itself.
 */
let mock: MockResponsesModel
let server: RunningServer
let client: TestClient
let push: PushService
let dataDir: string
const dirs: Array<string> = []

beforeAll(async () => {
  assertLoopbackOnly()
  mock = await startMockResponsesModel()
  dataDir = mkdtempSync(join(tmpdir(), "planbridge-notify-"))
  dirs.push(dataDir)
  server = await startServer({
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
          apiKey: "k"
        }),
        capabilities: codexCapabilities
      }
    ]
  })
  client = await connect({ url: server.url, token: server.token, clientId: "phone-1" })
  push = await startPushService()
}, 60_000)

afterAll(async () => {
  await client?.close()
  await server?.close()
  await push?.close()
  await mock?.close()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const api = async (path: string, init: { method?: string; body?: unknown } = {}) => {
  const res = await fetch(`${server.url}${path}`, {
    method: init.method ?? "GET",
    headers: {
      authorization: `Bearer ${server.token}`,
      ...(init.body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

const ok = async (command: Command) => {
  const frame = await client.command(command)
  if (frame.type === "error") throw new Error(`${command.type} failed: ${frame.error.code}: ${frame.error.message}`)
  return frame.result as Record<string, unknown>
}

const question = (secret: boolean): ScriptedOutput => ({
  type: "function_call",
  name: "request_user_input",
  arguments: {
    questions: [
      {
        id: "db_choice",
        header: "Database",
        question: "Which database should the service use?",
        isSecret: secret,
        options: [
          { label: "PostgreSQL (Recommended)", description: "Relational." },
          { label: "SQLite", description: "Embedded." }
        ]
      }
    ]
  }
})

/** A session whose turn asks one question; resolves once it is asked. */
const asking = async (secret = false) => {
  mock.script({ output: [question(secret)] }, { output: [{ type: "text", text: "Noted." }] })
  const cwd = mkdtempSync(join(tmpdir(), "planbridge-notify-cwd-"))
  dirs.push(cwd)
  const { threadId } = (await ok({ type: "session.start", provider: "codex", cwd, mode: "plan" })) as {
    threadId: string
  }
  await ok({ type: "thread.subscribe", threadId: threadId as never })
  await ok({ type: "turn.start", threadId: threadId as never, text: "Ask me first." })
  const asked = await client.waitFor(isEvent("user-input.requested", threadId), 90_000)
  if (asked.event.type !== "user-input.requested") throw new Error("unreachable")
  return { threadId, promptId: asked.event.payload.prompt.promptId as string }
}

/** Resolves once `find` finds something (checked every 50 ms, for at most `ms`). */
const eventually = async <A>(find: () => A | undefined, ms = 30_000): Promise<A> => {
  const until = Date.now() + ms
  for (;;) {
    const found = find()
    if (found !== undefined) return found
    if (Date.now() > until) throw new Error("not within the time")
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** The outbox's status once `done` holds of it (the store records an attempt just after its answer). */
const statusWhen = async <S>(done: (status: S) => boolean): Promise<S> => {
  for (;;) {
    const status = (await api("/api/notifications/status?limit=200")).body as S
    if (done(status)) return status
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** `<sinkId>.<HMAC-SHA256, base64url>` */
const capability = expect.stringMatching(/^sink-[0-9a-f]{24}\.[A-Za-z0-9_-]{43}$/u)

const pushed = (promptId: string, kind: "opened" | "resolved") =>
  push.received.find((r) => {
    const m = r.message as NotificationMessage
    return m.promptId === promptId && m.kind === kind
  })

describe("notifications", { timeout: 300_000 }, () => {
  it("keeps its VAPID key and webhook secret 0600 in the data dir, and hands out the public key", async () => {
    for (const file of ["vapid.json", "webhook-secret"]) expect(statSync(join(dataDir, file)).mode & 0o777).toBe(0o600)
    const { body } = await api("/api/notifications/vapid-public-key")
    const stored = JSON.parse(readFileSync(join(dataDir, "vapid.json"), "utf8")) as { publicKey: string }
    expect(body).toEqual({ publicKey: stored.publicKey })
    // A bad subscription is refused with the path of what is wrong, nothing added.
    const bad = await api("/api/notifications/sinks", {
      method: "POST",
      body: { kind: "webpush", subscription: { endpoint: "ftp://x", keys: { p256dh: "a", auth: "b" } } }
    })
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({
      error: { code: "invalid_frame", message: expect.stringContaining('at ["subscription"]["endpoint"]') }
    })
  })

  it("a question is pushed (VAPID-signed, encrypted to the subscription) with its options; its answer replaces it", async () => {
    const added = await api("/api/notifications/sinks", {
      method: "POST",
      body: { kind: "webpush", subscription: push.subscription, clientId: "phone-1" }
    })
    expect(added.status).toBe(200)
    const { threadId, promptId } = await asking()
    const opened = await eventually(() => pushed(promptId, "opened"))
    const { publicKey } = (await api("/api/notifications/vapid-public-key")).body as { publicKey: string }
    expect(opened.vapidKey).toBe(publicKey)
    expect(opened.urgency).toBe("high")
    expect(opened.topic).toMatch(/^[A-Za-z0-9_-]{1,32}$/u)
    expect(opened.message).toEqual({
      kind: "opened",
      tag: `planbridge-prompt:${promptId}`,
      threadId,
      promptId,
      title: "Database",
      body: "Which database should the service use?",
      // Each with its answer capability for this subscription (AnswerCapability.ts): only Web Push gets one.
      actions: [
        { questionId: "db_choice", optionId: "opt-0", label: "PostgreSQL (Recommended)", answer: capability },
        { questionId: "db_choice", optionId: "opt-1", label: "SQLite", answer: capability }
      ]
    })

    await ok({
      type: "userInput.respond",
      promptId: promptId as never,
      answers: [{ questionId: "db_choice", selectedOptionIds: ["opt-1"] }] as never,
      clientRequestId: "answer-1"
    })
    const replaced = await eventually(() => pushed(promptId, "resolved"))
    expect(replaced.topic).toBe(opened.topic)
    expect(replaced.message).toMatchObject({
      kind: "resolved",
      tag: `planbridge-prompt:${promptId}`,
      resolution: "answered"
    })
    expect(push.refused).toEqual([])

    // Each is sent once, and its attempt is visible with its status.
    const status = await statusWhen<{
      recent: Array<{ promptId: string; event: string; status: string; attempts: number; lastStatus: number }>
    }>((st) => st.recent.filter((r) => r.promptId === promptId && r.status === "sent").length === 2)
    const rows = status.recent.filter((r) => r.promptId === promptId)
    expect(rows.map((r) => [r.event, r.status, r.attempts, r.lastStatus]).sort()).toEqual([
      ["opened", "sent", 1, 201],
      ["resolved", "sent", 1, 201]
    ])
    expect(push.received.filter((r) => (r.message as NotificationMessage).promptId === promptId)).toHaveLength(2)
  })

  it("a secret question's push names only that a question waits", async () => {
    const { threadId, promptId } = await asking(true)
    const opened = await eventually(() => pushed(promptId, "opened"))
    expect(opened.message).toMatchObject({ title: "A question waits", body: "", actions: [] })
    expect(JSON.stringify(opened.message)).not.toContain("database")
    // Skipped, so that the model's scripted reply to it is taken by its own turn.
    await ok({ type: "userInput.dismiss", promptId: promptId as never, resolution: "empty", clientRequestId: "skip-1" })
    await client.waitFor(isEvent("turn.completed", threadId), 90_000)
  })

  it("a failing webhook is retried, each attempt recorded; a hanging one delays nothing else", async () => {
    const secret = () => readFileSync(join(dataDir, "webhook-secret"), "utf8").trim()
    const flaky = await startWebhookReceiver(secret)
    const hanging = await startWebhookReceiver(secret)
    hanging.status = () => "hang"
    // Two failures of each delivery, then success.
    flaky.status = (n) => (n <= 2 ? 503 : 200)
    try {
      for (const hook of [flaky, hanging])
        expect(
          (await api("/api/notifications/sinks", { method: "POST", body: { kind: "webhook", url: hook.url } })).status
        ).toBe(200)
      const { threadId, promptId } = await asking()
      // Ingestion goes on while a sink hangs: the question is answered and the turn ends.
      await ok({
        type: "userInput.respond",
        promptId: promptId as never,
        answers: [{ questionId: "db_choice", selectedOptionIds: ["opt-0"] }] as never,
        clientRequestId: "answer-2"
      })
      await client.waitFor(isEvent("turn.completed", threadId), 90_000)
      const delivered = await eventually(
        () => flaky.received.find((r) => (r.body as NotificationMessage).promptId === promptId && r.answered === 200),
        20_000
      )
      expect(delivered.body).toMatchObject({ kind: "opened", promptId })
      // A webhook's relay is a third party: it gets the options, never a capability to answer with.
      expect((delivered.body as NotificationMessage).actions.map((a) => Object.keys(a).sort())).toEqual([
        ["label", "optionId", "questionId"],
        ["label", "optionId", "questionId"]
      ])
      expect(flaky.refused).toEqual([])
      type Status = {
        sinks: Array<{ sinkId: string; endpoint: string }>
        recent: Array<{
          notificationId: string
          sinkId: string
          promptId: string
          event: string
          status: string
          attempts: number
        }>
        attempts: Array<{ notificationId: string; attempt: number; statusCode: number | null; error: string | null }>
      }
      const status = await statusWhen<Status>((st) =>
        st.recent.some((r) => r.notificationId === delivered.delivery && r.status === "sent")
      )
      const opened = status.recent.find(
        (r) => r.promptId === promptId && r.event === "opened" && r.notificationId === delivered.delivery
      )!
      expect(opened).toMatchObject({ status: "sent", attempts: 3 })
      const attempts = status.attempts
        .filter((a) => a.notificationId === opened.notificationId)
        .sort((a, b) => a.attempt - b.attempt)
        .map((a) => [a.attempt, a.statusCode])
      expect(attempts).toEqual([
        [1, 503],
        [2, 503],
        [3, 200]
      ])
      // The hanging sink's delivery is still waiting for its answer (or its timeout): never sent.
      const hangingSink = status.sinks.find((sink) => sink.endpoint === hanging.url)!
      const waiting = status.recent.find(
        (r) => r.sinkId === hangingSink.sinkId && r.promptId === promptId && r.event === "opened"
      )
      expect(waiting?.status).toBe("pending")
      // The same, as an operator reads it.
      const cli = await runCli("notifications", "status", "--url", server.url, "--data-dir", dataDir)
      expect(cli).toMatchObject({ code: 0, stderr: "" })
      expect(cli.stdout).toContain(`webhook  ${hangingSink.sinkId}  ${hanging.url}`)
      expect(cli.stdout).toContain(`${opened.notificationId} #2  503`)
      expect(cli.stdout).toMatch(/notifications: \d+ pending, \d+ sent, \d+ failed/u)
    } finally {
      await flaky.close()
      await hanging.close()
    }
  })
})
