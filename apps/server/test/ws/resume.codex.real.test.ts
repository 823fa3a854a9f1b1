import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ServeProcess } from "../chaos/rig.ts"
import { recordedGroupTokens, stopServe } from "../chaos/rig.ts"
import { askTwoQuestions, planReply } from "../provider/codex/realPeerSupport.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { functionCallOutputs, startMockResponsesModel, type MockResponsesModel } from "../support/mockResponsesModel.ts"
import {
  allEvents,
  client,
  crashProviders,
  errorOf,
  expectGapFree,
  filesContaining,
  homesOf,
  modeOf,
  planbridgeEntries,
  providerProcesses,
  resultOf,
  serve,
  serveEnv,
  sigkill,
  waitEvent,
  type EventFrame
} from "../support/resumeRig.ts"

/**
 * Issue 16 with the real `codex app-server` 0.171.0 behind `planbridge serve` (a child process,
 * SIGKILLed and restarted on the same data dir), its model scripted on loopback: a thread gets
 * its conversation back on a new provider session with `thread.resume` — after a server crash
 * and after a provider crash — and its events stay one gap-free sequence.
 */
let mock: MockResponsesModel
let dataDir: string
let cwd: string
let tmp: string
let env: Record<string, string>
let server: ServeProcess | undefined
let threadId: string
let nativeThreadId: string
let providerHome: string
const started = Date.now()
/** Distinctive, so that a copy of it anywhere in the data dir is found. */
const API_KEY = "sk-planbridge-resume-test-2f8c1d"
const FIRST_TEXT = "Plan a small HTTP service for me."

beforeAll(async () => {
  assertLoopbackOnly()
  dataDir = mkdtempSync(join(tmpdir(), "planbridge-resume-codex-"))
  cwd = mkdtempSync(join(tmpdir(), "planbridge-resume-codex-cwd-"))
  tmp = mkdtempSync(join(tmpdir(), "planbridge-resume-codex-tmp-"))
  mock = await startMockResponsesModel()
  env = serveEnv({
    OPENAI_API_KEY: API_KEY,
    PLANBRIDGE_CODEX_BASE_URL: mock.baseUrl,
    PLANBRIDGE_CODEX_MODEL: "gpt-5.5",
    TMPDIR: tmp
  })
  server = await serve(dataDir, env)
})

afterAll(async () => {
  if (server !== undefined) await stopServe(server)
  await mock?.close()
  for (const dir of [dataDir, cwd, tmp]) if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  console.info(`resume.codex.real.test.ts wall time: ${Date.now() - started} ms`)
})

const restart = async () => {
  await sigkill(server!)
  server = await serve(dataDir, env)
  return server
}

const answers = [
  { questionId: "db_choice", selectedOptionIds: ["opt-1"] },
  { questionId: "test_scope", selectedOptionIds: ["opt-0"], text: "plus fuzzing" }
] as never

describe("thread.resume with the real Codex app-server", { timeout: 180_000 }, () => {
  it("a plan turn with an answered question, then a second question left pending, then SIGKILL", async () => {
    const a = await client(server!)
    try {
      mock.script({ output: [askTwoQuestions] }, { output: [planReply] }, { output: [askTwoQuestions] })
      ;({ threadId } = resultOf(await a.command({ type: "session.start", provider: "codex", cwd, mode: "plan" })) as {
        threadId: string
      })
      resultOf(await a.command({ type: "thread.subscribe", threadId: threadId as never, afterSeq: 0 }))
      const startedEvent = await waitEvent(a, "session.started", threadId)
      if (startedEvent.event.type !== "session.started") throw new Error("unreachable")
      nativeThreadId = startedEvent.event.payload.nativeThreadId!
      providerHome = startedEvent.event.payload.providerHome!
      // The session's CODEX_HOME is the thread's own directory under the data dir, private.
      expect(providerHome).toBe(join(dataDir, "homes", threadId))
      expect(modeOf(providerHome)).toBe(0o700)
      expect(modeOf(join(dataDir, "homes"))).toBe(0o700)

      resultOf(await a.command({ type: "turn.start", threadId: threadId as never, text: FIRST_TEXT }))
      const asked = await waitEvent(a, "user-input.requested", threadId)
      if (asked.event.type !== "user-input.requested") throw new Error("unreachable")
      const promptId = asked.event.payload.prompt.promptId
      resultOf(await a.command({ type: "userInput.respond", promptId, answers, clientRequestId: "answer-1" }))
      const first = await waitEvent(a, "turn.completed", threadId)

      // A second turn asks again; nobody answers before the server dies.
      resultOf(await a.command({ type: "turn.start", threadId: threadId as never, text: "One more question?" }))
      await waitEvent(a, "user-input.requested", threadId, first.seq)
    } finally {
      await a.close()
    }
    expect(providerProcesses(dataDir).length).toBeGreaterThan(0)
    // A home no thread needs (a start that never got on record), to be swept by the next start.
    mkdirSync(join(dataDir, "homes", "no-such-thread"), { recursive: true })
    writeFileSync(join(dataDir, "homes", "no-such-thread", "config.toml"), "")
    await restart()
    // Nothing of a per-session home was ever made in the temporary directory.
    expect(planbridgeEntries(tmp)).toEqual([])
    // The stale home is gone, the one the thread resumes from is kept.
    expect(homesOf(dataDir)).toEqual([threadId])
  })

  it("after the restart: the question is server_restarted, the turn interrupted, turn.start says a resume is possible", async () => {
    const c = await client(server!)
    try {
      resultOf(await c.command({ type: "thread.subscribe", threadId: threadId as never }))
      const refused = errorOf(await c.command({ type: "turn.start", threadId: threadId as never, text: "hello?" }))
      expect(refused.code).toBe("session_not_live")
      expect(refused.message).toContain("thread.resume")
    } finally {
      await c.close()
    }
    const events = await allEvents(server!, threadId, 1)
    const resolved = events.filter((f) => f.event.type === "user-input.resolved").map((f) => f.event.payload)
    expect(resolved.map((p) => (p as { resolution: string }).resolution)).toEqual(["answered", "server_restarted"])
    const completed = events.filter((f) => f.event.type === "turn.completed").map((f) => f.event.payload)
    expect(completed.map((p) => (p as { status: string }).status)).toEqual(["completed", "interrupted"])
  })

  it("two clients resume at once: one new provider session, both see the same events, and the agent kept its context", async () => {
    const [b, c] = await Promise.all([client(server!), client(server!)])
    try {
      for (const x of [b, c]) resultOf(await x.command({ type: "thread.subscribe", threadId: threadId as never }))
      const head = (await allEvents(server!, threadId, 1)).at(-1)!.seq
      const [fromB, fromC] = await Promise.all([
        b.command({ type: "thread.resume", threadId: threadId as never }),
        c.command({ type: "thread.resume", threadId: threadId as never })
      ])
      expect(resultOf(fromB!)).toEqual({ threadId, resumed: true, resumedFrom: nativeThreadId })
      expect(resultOf(fromC!)).toEqual({ threadId, resumed: true, resumedFrom: nativeThreadId })
      const [startedB, startedC] = await Promise.all([b, c].map((x) => waitEvent(x, "session.started", threadId, head)))
      expect(startedB!.seq).toBe(startedC!.seq)
      expect(startedB!.event.payload).toMatchObject({
        resumed: true,
        resumedFrom: nativeThreadId,
        nativeThreadId,
        providerHome
      })
      // One new provider process group was started for both resumes.
      expect(new Set(recordedGroupTokens(dataDir)).size).toBe(1)
      // A resume of a live thread starts nothing.
      expect(resultOf(await b.command({ type: "thread.resume", threadId: threadId as never }))).toEqual({
        threadId,
        resumed: false
      })

      mock.script({ output: [{ type: "text", text: "Continuing with SQLite." }] })
      const before = mock.responseRequests().length
      resultOf(await b.command({ type: "turn.start", threadId: threadId as never, text: "Go on with step 1." }))
      const done = await waitEvent(b, "turn.completed", threadId, startedB!.seq)
      expect(done.event.payload).toMatchObject({ status: "completed" })
      await waitEvent(c, "turn.completed", threadId, startedB!.seq)
      const seen = (x: typeof b) =>
        x.frames.filter((f): f is EventFrame => f.type === "event" && f.seq > head).map((f) => [f.seq, f.event.eventId])
      expect(seen(b)).toEqual(seen(c))

      // The model's request for the new turn carries the first turn's message and the user's answer.
      const request = mock.responseRequests()[before]!
      expect(JSON.stringify(request.body.input)).toContain(FIRST_TEXT)
      const outputs = JSON.stringify(functionCallOutputs(request))
      expect(outputs).toContain("SQLite")
      expect(outputs).toContain("plus fuzzing")
    } finally {
      await Promise.all([b.close(), c.close()])
    }
    const events = await allEvents(server!, threadId, 1)
    expectGapFree(events)
    const resumedStarts = events.filter((f) => f.event.type === "session.started" && f.event.payload.resumed)
    expect(resumedStarts).toHaveLength(1)
  })

  it("resumes after the provider crashed while the server stayed up", async () => {
    const d = await client(server!)
    try {
      resultOf(await d.command({ type: "thread.subscribe", threadId: threadId as never }))
      const head = (await allEvents(server!, threadId, 1)).at(-1)!.seq
      expect(await crashProviders(dataDir)).toBeGreaterThan(0)
      const exited = await waitEvent(d, "session.exited", threadId, head)
      // Killed by a signal nobody in Planbridge sent.
      expect(exited.event.payload).toMatchObject({ exitKind: "killed", signal: "SIGKILL" })
      expect(
        errorOf(await d.command({ type: "turn.start", threadId: threadId as never, text: "x" })).message
      ).toContain("thread.resume")
      expect(resultOf(await d.command({ type: "thread.resume", threadId: threadId as never }))).toMatchObject({
        resumed: true
      })
      mock.script({ output: [{ type: "text", text: "Still here." }] })
      const before = mock.responseRequests().length
      resultOf(await d.command({ type: "turn.start", threadId: threadId as never, text: "Are you still there?" }))
      await waitEvent(d, "turn.completed", threadId, exited.seq)
      expect(JSON.stringify(mock.responseRequests()[before]!.body.input)).toContain(FIRST_TEXT)
    } finally {
      await d.close()
    }
    expectGapFree(await allEvents(server!, threadId, 1))
    // The thread's CODEX_HOME now lives in the data dir: no copy of the API key is in it.
    expect(filesContaining(dataDir, API_KEY)).toEqual([])
  })

  it("a resume whose native session is gone is a typed error, and the thread stays readable", async () => {
    await restart()
    // The rollout Codex would resume from is lost.
    rmSync(join(providerHome, "sessions"), { recursive: true, force: true })
    const e = await client(server!)
    try {
      const refused = errorOf(await e.command({ type: "thread.resume", threadId: threadId as never }))
      expect(refused.code).toBe("resume_failed")
      expect(refused.message).toContain("stays readable")
      resultOf(await e.command({ type: "thread.subscribe", threadId: threadId as never }))
      const snapshot = await e.waitFor((f) => f.type === "snapshot")
      expect(snapshot.type === "snapshot" && snapshot.snapshot.turns.length).toBe(4)
      const unknown = errorOf(await e.command({ type: "thread.resume", threadId: "no-such-thread" as never }))
      expect(unknown.code).toBe("unknown_thread")
    } finally {
      await e.close()
    }
  })

  it("a session that fails to start leaves no home behind", async () => {
    const f = await client(server!)
    try {
      const before = homesOf(dataDir)
      const refused = errorOf(
        await f.command({ type: "session.start", provider: "codex", cwd: join(cwd, "no-such-dir"), mode: "default" })
      )
      expect(refused.code).toBe("provider_error")
      expect(homesOf(dataDir)).toEqual(before)
    } finally {
      await f.close()
    }
  })
})
