import type { NotificationMessage } from "@planbridge/contracts"
import { copyFileSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { processesCarrying, recordedGroupTokens, stopServe, type ServeProcess } from "../chaos/rig.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { startMockResponsesModel, type MockResponsesModel } from "../support/mockResponsesModel.ts"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"
import { startPushService, type PushService } from "../support/pushService.ts"
import { makeReplicaDir } from "../support/replicaDir.ts"
import { client, resultOf, serve, serveEnv, sigkill, waitEvent } from "../support/resumeRig.ts"
import type { TestClient } from "../support/wsClient.ts"

/**
 * Issue 29 on two `planbridge serve` replicas sharing one PostgreSQL database (started by the
 * test on loopback), the real `codex app-server` behind them with its model scripted: both derive
 * the outbox from the one log and both send, yet the push service the test runs (checking VAPID,
 * decrypting each message) gets exactly one message per prompt and event. And the replica a
 * question was asked on is SIGKILLed between "opened" and "sent" (the push service refusing until
 * then): the other one sends it, once, and the replacement for its recovery, once.
 */
const ROUNDS = Number(process.env.PLANBRIDGE_NOTIFY_ROUNDS ?? 5)
const LEASE_TTL_MS = 3_000
const TOKEN = "notify-replica-token-".padEnd(40, "x")

let postgres: TestPostgres
let mock: MockResponsesModel
let push: PushService
let env: Record<string, string>
let cwd: string
const dirs: Array<string> = []
const replicas: Array<ServeProcess> = []

const question = {
  type: "function_call" as const,
  name: "request_user_input",
  arguments: {
    questions: [
      {
        id: "db_choice",
        header: "Database",
        question: "Which database should the service use?",
        options: [
          { label: "PostgreSQL (Recommended)", description: "Relational." },
          { label: "SQLite", description: "Embedded." }
        ]
      }
    ]
  }
}

beforeAll(async () => {
  assertLoopbackOnly()
  postgres = await startPostgres()
  const url = await postgres.createDatabase("notify")
  mock = await startMockResponsesModel()
  push = await startPushService()
  cwd = mkdtempSync(join(tmpdir(), "planbridge-notify-replica-cwd-"))
  env = serveEnv({
    OPENAI_API_KEY: "sk-planbridge-notify-test",
    PLANBRIDGE_CODEX_BASE_URL: mock.baseUrl,
    PLANBRIDGE_CODEX_MODEL: "gpt-5.5",
    PLANBRIDGE_STORE: url,
    PLANBRIDGE_LEASE_TTL_MS: String(LEASE_TTL_MS)
  })
  const first = makeReplicaDir(TOKEN)
  dirs.push(first)
  replicas.push(await serve(first, env))
  // The deployment's VAPID keys are shared like its token: the second replica gets the first's.
  const second = makeReplicaDir(TOKEN)
  dirs.push(second)
  copyFileSync(join(first, "vapid.json"), join(second, "vapid.json"))
  copyFileSync(join(first, "webhook-secret"), join(second, "webhook-secret"))
  copyFileSync(join(first, "push-answer-key"), join(second, "push-answer-key"))
  replicas.push(await serve(second, env))
}, 180_000)

afterAll(async () => {
  await Promise.all(replicas.map((r) => stopServe(r)))
  for (const dir of dirs)
    for (const pid of processesCarrying(new Set(recordedGroupTokens(dir)))) process.kill(pid, "SIGKILL")
  await push?.close()
  await mock?.close()
  postgres?.stop()
  for (const dir of [...dirs, cwd]) if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

const api = async (server: ServeProcess, path: string, body?: unknown) => {
  const res = await fetch(`${server.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      authorization: `Bearer ${server.token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return (await res.json()) as Record<string, unknown>
}

interface Status {
  readonly counts: { pending: number; sent: number; failed: number }
  readonly attempts: ReadonlyArray<{ notificationId: string; replica: string; statusCode: number | null }>
}

/** Until the outbox has nothing pending and holds at least `sent` sent rows. */
const allSent = async (server: ServeProcess, sent: number): Promise<Status> => {
  for (;;) {
    const status = (await api(server, "/api/notifications/status?limit=500")) as unknown as Status
    if (status.counts.pending === 0 && status.counts.sent >= sent) return status
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Accepted (2xx) messages per prompt and event. */
const accepted = () => {
  const by = new Map<string, number>()
  for (const r of push.received) {
    if (r.answered < 200 || r.answered >= 300) continue
    const m = r.message as NotificationMessage
    const key = `${m.promptId}|${m.kind}`
    by.set(key, (by.get(key) ?? 0) + 1)
  }
  return by
}

/** A thread on `owner`'s session whose turn asks one question; resolves with its prompt id. */
const ask = async (owner: TestClient, threadId: string, after: number) => {
  mock.script({ output: [question] }, { output: [{ type: "text", text: "Noted." }] })
  resultOf(await owner.command({ type: "turn.start", threadId: threadId as never, text: "Ask me." }))
  const asked = await waitEvent(owner, "user-input.requested", threadId, after, 90_000)
  if (asked.event.type !== "user-input.requested") throw new Error("unreachable")
  return { promptId: asked.event.payload.prompt.promptId as string, seq: asked.seq }
}

describe("notifications on two PostgreSQL replicas", { timeout: 600_000 }, () => {
  it(`exactly one message per prompt and event, ${ROUNDS} rounds, both replicas sending`, async () => {
    const [a, b] = await Promise.all(replicas.map((r) => client(r)))
    try {
      await api(replicas[0]!, "/api/notifications/sinks", { kind: "webpush", subscription: push.subscription })
      const { threadId } = resultOf(
        await a!.command({ type: "session.start", provider: "codex", cwd, mode: "plan" })
      ) as { threadId: string }
      for (const c of [a!, b!]) resultOf(await c.command({ type: "thread.subscribe", threadId: threadId as never }))
      let after = 0
      const prompts: Array<string> = []
      for (let round = 0; round < ROUNDS; round++) {
        const { promptId, seq } = await ask(a!, threadId, after)
        prompts.push(promptId)
        // Answered on the replica that does not own the session (relayed).
        resultOf(
          await b!.command({
            type: "userInput.respond",
            promptId: promptId as never,
            answers: [{ questionId: "db_choice", selectedOptionIds: ["opt-0"] }] as never,
            clientRequestId: `round-${round}`
          })
        )
        after = (await waitEvent(a!, "turn.completed", threadId, seq, 90_000)).seq
      }
      const status = await allSent(replicas[1]!, ROUNDS * 2)
      const counts = accepted()
      for (const promptId of prompts)
        for (const kind of ["opened", "resolved"])
          expect(counts.get(`${promptId}|${kind}`), `${promptId} ${kind}`).toBe(1)
      expect(push.refused).toEqual([])
      const senders = new Set(status.attempts.map((x) => x.replica))
      console.info(
        `notificationReplicas: ${ROUNDS} prompts, ${ROUNDS * 2} notifications, ` +
          `${push.received.length} messages received, 0 duplicates; sent by ${senders.size} replica(s)`
      )
    } finally {
      await a!.close()
      await b!.close()
    }
  })

  it("SIGKILL of a replica between opened and sent: the other sends it once, and its replacement once", async () => {
    const before = push.received.length
    push.status = () => 503
    const a = await client(replicas[0]!)
    const { threadId } = resultOf(await a.command({ type: "session.start", provider: "codex", cwd, mode: "plan" })) as {
      threadId: string
    }
    resultOf(await a.command({ type: "thread.subscribe", threadId: threadId as never }))
    mock.script({ output: [question] })
    resultOf(await a.command({ type: "turn.start", threadId: threadId as never, text: "Ask me." }))
    const asked = await waitEvent(a, "user-input.requested", threadId, 0, 90_000)
    if (asked.event.type !== "user-input.requested") throw new Error("unreachable")
    const promptId = asked.event.payload.prompt.promptId
    // Opened, refused by the push service, not sent: then the replica that owns it dies.
    for (;;) {
      if (push.received.slice(before).some((r) => (r.message as NotificationMessage).promptId === promptId)) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    await a.close()
    await sigkill(replicas[0]!)
    push.status = () => 201
    // The survivor takes the thread over (its question resolved server_restarted) and sends both.
    const b = await client(replicas[1]!)
    try {
      resultOf(await b.command({ type: "thread.subscribe", threadId: threadId as never, afterSeq: 0 }))
      await waitEvent(b, "user-input.resolved", threadId, 0, 60_000)
      await allSent(replicas[1]!, 0)
      for (;;) {
        if (accepted().get(`${promptId}|resolved`) !== undefined) break
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      const status = await allSent(replicas[1]!, 0)
      expect(status.counts.pending).toBe(0)
      const counts = accepted()
      expect(counts.get(`${promptId}|opened`)).toBe(1)
      expect(counts.get(`${promptId}|resolved`)).toBe(1)
      const refusedFirst = push.received
        .slice(before)
        .filter((r) => (r.message as NotificationMessage).promptId === promptId && r.answered === 503)
      expect(refusedFirst.length).toBeGreaterThan(0)
    } finally {
      await b.close()
    }
  })
})
