import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { alive, stopServe, until, type ServeProcess } from "../chaos/rig.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { startMockMessagesModel, type MockMessagesModel } from "../support/mockMessagesModel.ts"
import { startMockResponsesModel, type MockResponsesModel } from "../support/mockResponsesModel.ts"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"
import { makeReplicaDir } from "../support/replicaDir.ts"
import {
  client,
  expectGapFree,
  allEvents,
  filesContaining,
  homesOf,
  providerProcesses,
  resultOf,
  serve,
  serveEnv,
  sigkill,
  waitEvent
} from "../support/resumeRig.ts"

/**
 * Issue 32: the provider state of a thread is kept in the store, so a replica on another machine
 * resumes it. Two `planbridge serve` replicas on one PostgreSQL 15 (started by the test, on
 * loopback), each with a data dir of its own; the real `codex app-server` 0.171.0 and the real
 * Claude Agent SDK 0.3.333 behind them, their models scripted. A thread runs a turn on its owner;
 * the owner's machine is then lost: the server SIGKILLed, its provider processes too, its data
 * dir deleted. The other replica takes the thread over, `thread.resume` restores the thread's
 * provider home from the store into its own (empty) data dir, and the model's next request
 * carries the earlier conversation. What it restores was captured after the completed turn (a
 * SIGKILLed server captures nothing).
 */
const LEASE_TTL_MS = 5_000
const TOKEN = "provider-state-token-".padEnd(40, "s")
const OPENAI_KEY = "sk-planbridge-state-codex-7d1e"
const ANTHROPIC_KEY = "sk-planbridge-state-claude-3a9b"
const started = Date.now()

let postgres: TestPostgres
let url: string
let db: pg.Client
let codexModel: MockResponsesModel
let claudeModel: MockMessagesModel
let cwd: string
let env: Record<string, string>
/** The replica that takes threads over; it runs throughout. */
let survivor: ServeProcess
let survivorDir: string
const dirs: Array<string> = []
const replicas: Array<ServeProcess> = []

beforeAll(async () => {
  assertLoopbackOnly()
  postgres = await startPostgres()
  url = await postgres.createDatabase("provider_states")
  db = new pg.Client({ connectionString: url })
  db.on("error", () => undefined)
  await db.connect()
  cwd = mkdtempSync(join(tmpdir(), "planbridge-state-cwd-"))
  codexModel = await startMockResponsesModel()
  claudeModel = await startMockMessagesModel()
  env = serveEnv({
    OPENAI_API_KEY: OPENAI_KEY,
    PLANBRIDGE_CODEX_BASE_URL: codexModel.baseUrl,
    PLANBRIDGE_CODEX_MODEL: "gpt-5.5",
    ANTHROPIC_API_KEY: ANTHROPIC_KEY,
    PLANBRIDGE_CLAUDE_BASE_URL: claudeModel.baseUrl,
    PLANBRIDGE_STORE: url,
    PLANBRIDGE_LEASE_TTL_MS: String(LEASE_TTL_MS)
  })
  survivorDir = makeReplicaDir(TOKEN)
  dirs.push(survivorDir)
  survivor = await serve(survivorDir, env)
  replicas.push(survivor)
}, 180_000)

afterAll(async () => {
  await Promise.all(replicas.map((r) => stopServe(r)))
  await db?.end().catch(() => undefined)
  await codexModel?.close()
  await claudeModel?.close()
  postgres?.stop()
  for (const dir of [...dirs, cwd]) if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  console.info(`providerStateResume.real.test.ts wall time: ${Date.now() - started} ms`)
})

/** The stored capture of the thread: its size and when it was taken, or undefined. */
const captured = async (threadId: string) =>
  (
    await db.query<{ bytes: number; captured_at: string; sealed: string }>(
      "select bytes, captured_at, sealed from provider_states where thread_id = $1",
      [threadId]
    )
  ).rows[0]

/**
 * The owner's machine is lost: the server SIGKILLed, its provider processes with it, its data
 * dir (with the thread's provider home) deleted.
 */
const loseMachine = async (owner: ServeProcess, dataDir: string) => {
  const providers = providerProcesses(dataDir)
  await sigkill(owner)
  for (const pid of providers) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // Gone with the server already.
    }
  }
  await until(() => providers.every((pid) => !alive(pid)), 10_000)
  rmSync(dataDir, { recursive: true, force: true })
}

const cases = [
  {
    provider: "codex" as const,
    script: (text: string) => codexModel.script({ output: [{ type: "text", text }] }),
    requests: () => codexModel.responseRequests().length,
    requestText: (i: number) => JSON.stringify(codexModel.responseRequests()[i]!.body.input)
  },
  {
    provider: "claude" as const,
    script: (text: string) => claudeModel.script({ blocks: [{ type: "text", text }] }),
    requests: () => claudeModel.mainRequests().length,
    requestText: (i: number) => JSON.stringify(claudeModel.mainRequests()[i]!.body.messages)
  }
]

describe("a thread resumed on a replica whose data dir lacks its provider home", { timeout: 300_000 }, () => {
  it.each(cases)(
    "$provider: the owner SIGKILLed and its data dir deleted; the other replica restores the home and continues",
    async ({ provider, script, requests, requestText }) => {
      const ownerDir = makeReplicaDir(TOKEN)
      dirs.push(ownerDir)
      const owner = await serve(ownerDir, env)
      replicas.push(owner)
      const firstText = `Remember the code word for ${provider}: HERON-${provider.length}41.`
      const firstReply = `Noted, the ${provider} code word is HERON-${provider.length}41.`
      const a = await client(owner)
      const b = await client(survivor)
      try {
        const { threadId } = resultOf(await a.command({ type: "session.start", provider, cwd, mode: "default" })) as {
          threadId: string
        }
        resultOf(await a.command({ type: "thread.subscribe", threadId: threadId as never, afterSeq: 0 }))
        const first = await waitEvent(a, "session.started", threadId)
        if (first.event.type !== "session.started") throw new Error("unreachable")
        const nativeId = first.event.payload.nativeThreadId ?? first.event.payload.nativeSessionId!
        expect(first.event.payload.providerHome).toBe(join(ownerDir, "homes", threadId))
        script(firstReply)
        resultOf(await a.command({ type: "turn.start", threadId: threadId as never, text: firstText }))
        const done = await waitEvent(a, "turn.completed", threadId, first.seq, 120_000)
        expect(done.event.payload).toMatchObject({ status: "completed" })
        // Captured after the completed turn, sealed: nothing of the conversation in clear.
        await expect.poll(() => captured(threadId), { timeout: 30_000 }).toBeDefined()
        const row = (await captured(threadId))!
        expect(row.bytes).toBeGreaterThan(0)
        console.info(`${provider}: ${row.bytes} bytes of provider state captured after one turn`)
        expect(row.sealed).not.toContain("HERON")

        await loseMachine(owner, ownerDir)
        resultOf(await b.command({ type: "thread.subscribe", threadId: threadId as never, afterSeq: 0 }))
        // The survivor takes the thread over once the dead owner's lease expires.
        const exited = await waitEvent(b, "session.exited", threadId, done.seq, 30_000)
        expect(exited.event.payload).toMatchObject({ exitKind: "server_restarted" })
        expect(homesOf(survivorDir)).not.toContain(threadId)

        expect(resultOf(await b.command({ type: "thread.resume", threadId: threadId as never }))).toEqual({
          threadId,
          resumed: true,
          resumedFrom: nativeId
        })
        const resumed = await waitEvent(b, "session.started", threadId, exited.seq)
        // Its provider home is now the survivor's own, restored from the store.
        expect(resumed.event.payload).toMatchObject({
          resumed: true,
          providerHome: join(survivorDir, "homes", threadId)
        })
        script(`The code word was HERON-${provider.length}41.`)
        const before = requests()
        resultOf(await b.command({ type: "turn.start", threadId: threadId as never, text: "What was the code word?" }))
        const next = await waitEvent(b, "turn.completed", threadId, resumed.seq, 120_000)
        expect(next.event.payload).toMatchObject({ status: "completed" })
        // The model's next request carries the earlier conversation: the user's turn and the reply.
        const request = requestText(before)
        expect(request).toContain(firstText)
        expect(request).toContain(firstReply)
        expect(request).toContain("What was the code word?")
        expectGapFree(await allEvents(survivor, threadId, 1))
        // The restored home holds no provider key (nor does the rest of the survivor's data dir).
        expect(filesContaining(survivorDir, OPENAI_KEY)).toEqual([])
        expect(filesContaining(survivorDir, ANTHROPIC_KEY)).toEqual([])
      } finally {
        await Promise.all([a.close(), b.close()])
      }
    }
  )
})
