import type { NotificationMessage } from "@planbridge/contracts"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { processesCarrying, recordedGroupTokens, stopServe, type ServeProcess } from "../chaos/rig.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { startMockResponsesModel, type MockResponsesModel } from "../support/mockResponsesModel.ts"
import { startPushService, type PushService } from "../support/pushService.ts"
import { client, resultOf, serve, serveEnv, sigkill, waitEvent } from "../support/resumeRig.ts"

/**
 * Issue 29: no duplicate and no miss across SIGKILLs at random moments. `planbridge serve` (a
 * child process, on SQLite) with the real `codex app-server` behind it, its model scripted on
 * loopback, a Web Push sink on the push service the test runs. Each cycle starts the server on
 * the same data dir, asks a question in a new session and SIGKILLs the server at a random moment:
 * within `MAX_KILL_DELAY_MS` of the turn's start, or, every other cycle, within
 * `AIMED_KILL_DELAY_MS` of the question: before the question, between its "opened" and its send,
 * after it, or while the previous cycle's recovery ("server_restarted") is being sent.
 * After a last start, every prompt in the log has had its "opened" and "resolved" pushed and
 * recorded sent once, and nothing else; the one repeat a kill can cause (the push service took a
 * delivery, the kill lost its outcome, the next start sends it again on the same Topic and tag,
 * which a push service and a browser collapse) is told apart and counted.
 * `PLANBRIDGE_NOTIFY_KILLS` sets the number of cycles (3 by default).
 */
const KILLS = Number(process.env.PLANBRIDGE_NOTIFY_KILLS ?? 3)
const MAX_KILL_DELAY_MS = 1_500
const AIMED_KILL_DELAY_MS = 400

let mock: MockResponsesModel
let push: PushService
let env: Record<string, string>
let dataDir: string
let cwd: string
let server: ServeProcess | undefined

beforeAll(async () => {
  assertLoopbackOnly()
  mock = await startMockResponsesModel()
  push = await startPushService()
  dataDir = mkdtempSync(join(tmpdir(), "planbridge-notify-kills-"))
  cwd = mkdtempSync(join(tmpdir(), "planbridge-notify-kills-cwd-"))
  env = serveEnv({
    OPENAI_API_KEY: "sk-planbridge-notify-kills-test",
    PLANBRIDGE_CODEX_BASE_URL: mock.baseUrl,
    PLANBRIDGE_CODEX_MODEL: "gpt-5.5"
  })
}, 60_000)

afterAll(async () => {
  if (server !== undefined) await stopServe(server)
  for (const pid of processesCarrying(new Set(recordedGroupTokens(dataDir)))) process.kill(pid, "SIGKILL")
  await push?.close()
  await mock?.close()
  for (const dir of [dataDir, cwd]) if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

const api = async (path: string, body?: unknown) => {
  if (server === undefined) throw new Error("no server")
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

/** Accepted messages per `promptId|kind`. */
const accepted = () => {
  const by = new Map<string, number>()
  for (const r of push.received) {
    const m = r.message as NotificationMessage
    const key = `${m.promptId}|${m.kind}`
    by.set(key, (by.get(key) ?? 0) + 1)
  }
  return by
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("notifications across SIGKILLs at random moments", { timeout: 900_000 }, () => {
  it(`${KILLS} kills: every prompt's notifications sent once, none missed`, async () => {
    const phases = { beforeQuestion: 0, beforeSend: 0, afterSend: 0 }
    /** How many messages the push service had received when each kill struck. */
    const receivedAtKill: Array<number> = []
    const delays: Array<number> = []
    for (let cycle = 0; cycle < KILLS; cycle++) {
      server = await serve(dataDir, env)
      if (cycle === 0) await api("/api/notifications/sinks", { kind: "webpush", subscription: push.subscription })
      const c = await client(server)
      const { threadId } = resultOf(
        await c.command({ type: "session.start", provider: "codex", cwd, mode: "plan" })
      ) as { threadId: string }
      resultOf(await c.command({ type: "thread.subscribe", threadId: threadId as never }))
      mock.script({ output: [question] })
      resultOf(await c.command({ type: "turn.start", threadId: threadId as never, text: "Ask me." }))
      // Every other cycle aims at the window between "opened" and its send (the sender looks every 250 ms).
      const aimed = cycle % 2 === 1
      if (aimed) await waitEvent(c, "user-input.requested", threadId, 0, 90_000)
      const delay = Math.floor(Math.random() * (aimed ? AIMED_KILL_DELAY_MS : MAX_KILL_DELAY_MS))
      delays.push(delay)
      await sleep(delay)
      receivedAtKill.push(push.received.length)
      await sigkill(server)
      server = undefined
      // Where the kill landed, for the figure.
      const asked = c.frames.find((f) => f.type === "event" && f.event.type === "user-input.requested")
      const promptId =
        asked?.type === "event" && asked.event.type === "user-input.requested"
          ? asked.event.payload.prompt.promptId
          : undefined
      if (promptId === undefined) phases.beforeQuestion++
      else if (accepted().has(`${promptId}|opened`)) phases.afterSend++
      else phases.beforeSend++
      await c.close()
    }

    // A last start: its recovery resolves what the last kill left waiting, and everything due is sent.
    server = await serve(dataDir, env)
    const listed = (await api("/api/prompts?limit=500")) as { prompts: Array<{ promptId: string; status: string }> }
    const prompts = listed.prompts.map((p) => p.promptId)
    expect(listed.prompts.every((p) => p.status === "resolved")).toBe(true)
    for (;;) {
      const status = (await api("/api/notifications/status")) as { counts: { pending: number; failed: number } }
      const counts = accepted()
      const complete = prompts.every((p) => counts.has(`${p}|opened`) && counts.has(`${p}|resolved`))
      if (status.counts.pending === 0 && complete) {
        expect(status.counts.failed).toBe(0)
        break
      }
      await sleep(100)
    }
    // Sent once, as far as the store knows: one recorded 2xx attempt per notification.
    const status = (await api("/api/notifications/status?limit=500")) as {
      recent: Array<{ notificationId: string; promptId: string; event: string; status: string }>
      attempts: Array<{ notificationId: string; statusCode: number | null }>
    }
    const counts = accepted()
    let resent = 0
    for (const promptId of prompts)
      for (const kind of ["opened", "resolved"]) {
        const key = `${promptId}|${kind}`
        const row = status.recent.find((r) => r.promptId === promptId && r.event === kind)
        expect(row?.status, key).toBe("sent")
        const ok = status.attempts.filter((a) => a.notificationId === row!.notificationId && a.statusCode === 201)
        expect(ok, key).toHaveLength(1)
        // A copy more than that is a delivery the push service took just before a kill that lost
        // its outcome: the first copy before the kill, the next after the restart, on the same
        // Topic (a push service keeps one) and tag (a browser shows one). No other repeat.
        const copies = push.received.flatMap((r, index) => {
          const m = r.message as NotificationMessage
          return `${m.promptId}|${m.kind}` === key ? [{ index, topic: r.topic, tag: m.tag }] : []
        })
        expect(copies.length, key).toBeGreaterThanOrEqual(1)
        for (let i = 1; i < copies.length; i++) {
          const [before, after] = [copies[i - 1]!, copies[i]!]
          const killBetween = receivedAtKill.some((n) => before.index < n && n <= after.index)
          expect(killBetween, `${key}: copy ${i + 1} without a kill before it`).toBe(true)
          expect([after.topic, after.tag]).toEqual([before.topic, before.tag])
          resent++
        }
      }
    // Nothing was pushed for a prompt the log does not have.
    expect([...counts.keys()].every((key) => prompts.includes(key.split("|")[0]!))).toBe(true)
    expect(push.refused).toEqual([])
    console.info(
      `notificationKills: ${KILLS} SIGKILLs (delays ${delays.join(",")} ms): ${phases.beforeQuestion} before the question, ` +
        `${phases.beforeSend} between opened and sent, ${phases.afterSend} after the send; ${prompts.length} prompts, ` +
        `${prompts.length * 2} notifications, each recorded sent once; ${push.received.length} messages received, ` +
        `${resent} of them a resend of a delivery whose outcome a kill lost; 0 missed`
    )
  })
})
