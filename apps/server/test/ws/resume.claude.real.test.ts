import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ROOT, stopServe, type ServeProcess } from "../chaos/rig.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { startMockMessagesModel, type MockMessagesModel } from "../support/mockMessagesModel.ts"
import { greetingPlanTurn } from "../provider/claude/greetingPlan.ts"
import {
  allEvents,
  client,
  expectGapFree,
  filesContaining,
  homesOf,
  modeOf,
  planbridgeEntries,
  resultOf,
  serve,
  serveEnv,
  sigkill,
  waitEvent
} from "../support/resumeRig.ts"

/**
 * Issue 16 with the real Claude Agent SDK 0.3.333 (its CLI) behind `planbridge serve`, the model
 * scripted on loopback: a plan-mode turn with an answered question and an approved plan, a
 * SIGKILL of the server, a restart and `thread.resume`: the CLI resumes the same session from its
 * log in the thread's HOME, and the model's next request carries the whole conversation.
 */
let mock: MockMessagesModel
let dataDir: string
let cwd: string
let tmp: string
let env: Record<string, string>
let server: ServeProcess | undefined
const started = Date.now()
const FIRST_TEXT = "Plan a tiny greeting CLI"
/** Distinctive, so that a copy of it anywhere in the data dir is found. */
const API_KEY = "sk-planbridge-resume-test-2f8c1d"

beforeAll(async () => {
  assertLoopbackOnly()
  dataDir = mkdtempSync(join(tmpdir(), "planbridge-resume-claude-"))
  cwd = mkdtempSync(join(tmpdir(), "planbridge-resume-claude-cwd-"))
  tmp = mkdtempSync(join(tmpdir(), "planbridge-resume-claude-tmp-"))
  mock = await startMockMessagesModel()
  env = serveEnv({ ANTHROPIC_API_KEY: API_KEY, PLANBRIDGE_CLAUDE_BASE_URL: mock.baseUrl, TMPDIR: tmp })
  server = await serve(dataDir, env)
})

afterAll(async () => {
  if (server !== undefined) await stopServe(server)
  await mock?.close()
  for (const dir of [dataDir, cwd, tmp]) if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  console.info(`resume.claude.real.test.ts wall time: ${Date.now() - started} ms`)
})

describe("thread.resume with the real Claude Agent SDK", { timeout: 240_000 }, () => {
  it("a plan approved before a SIGKILL of the server; after a restart the resumed session has the conversation", async () => {
    mock.script(...greetingPlanTurn())
    const a = await client(server!)
    let threadId: string
    let nativeSessionId: string
    try {
      ;({ threadId } = resultOf(await a.command({ type: "session.start", provider: "claude", cwd, mode: "plan" })) as {
        threadId: string
      })
      resultOf(await a.command({ type: "thread.subscribe", threadId: threadId as never, afterSeq: 0 }))
      const first = await waitEvent(a, "session.started", threadId)
      if (first.event.type !== "session.started") throw new Error("unreachable")
      nativeSessionId = first.event.payload.nativeSessionId!
      // The CLI's HOME is the thread's directory under the data dir, private.
      expect(first.event.payload.providerHome).toBe(join(dataDir, "homes", threadId))
      expect(modeOf(first.event.payload.providerHome!)).toBe(0o700)

      resultOf(await a.command({ type: "turn.start", threadId: threadId as never, text: FIRST_TEXT }))
      const requested = await waitEvent(a, "user-input.requested", threadId)
      if (requested.event.type !== "user-input.requested") throw new Error("unreachable")
      const question = requested.event.payload.prompt.questions[0]!
      const casual = question.options.find((o) => o.label === "Casual")!.id
      resultOf(
        await a.command({
          type: "userInput.respond",
          promptId: requested.event.payload.prompt.promptId,
          answers: [{ questionId: question.id, selectedOptionIds: [casual] }],
          clientRequestId: "claude-answer-1"
        })
      )
      const proposed = await waitEvent(a, "plan.proposed.completed", threadId)
      if (proposed.event.type !== "plan.proposed.completed") throw new Error("unreachable")
      resultOf(
        await a.command({
          type: "plan.decide",
          threadId: threadId as never,
          planId: proposed.event.payload.planId,
          decision: "approved",
          clientRequestId: "claude-plan-1"
        })
      )
      await waitEvent(a, "turn.completed", threadId, proposed.seq)
    } finally {
      await a.close()
    }

    await sigkill(server!)
    expect(planbridgeEntries(tmp)).toEqual([])
    // What the resume needs is in the event log: a rebuild of the projections keeps it.
    const rebuilt = spawnSync(
      process.execPath,
      [join(ROOT, "apps/server/bin/planbridge.mjs"), "rebuild", "--data-dir", dataDir],
      {
        cwd: ROOT,
        env,
        encoding: "utf8"
      }
    )
    expect(rebuilt.status, rebuilt.stderr).toBe(0)
    server = await serve(dataDir, env)
    expect(homesOf(dataDir)).toEqual([threadId])

    const b = await client(server)
    try {
      resultOf(await b.command({ type: "thread.subscribe", threadId: threadId as never }))
      const head = (await allEvents(server, threadId, 1)).at(-1)!.seq
      expect(resultOf(await b.command({ type: "thread.resume", threadId: threadId as never }))).toEqual({
        threadId,
        resumed: true,
        resumedFrom: nativeSessionId
      })
      const resumed = await waitEvent(b, "session.started", threadId, head)
      // The CLI continues the same session (its log), so the native id stays.
      expect(resumed.event.payload).toMatchObject({ resumed: true, resumedFrom: nativeSessionId, nativeSessionId })
      const configured = await waitEvent(b, "session.configured", threadId, head)
      // The thread's last mode: the approved plan left plan mode.
      expect(configured.event.payload).toMatchObject({ mode: "default" })

      mock.script({ blocks: [{ type: "text", text: "Continuing with greet.js." }] })
      const before = mock.mainRequests().length
      resultOf(await b.command({ type: "turn.start", threadId: threadId as never, text: "Now write greet.js" }))
      const done = await waitEvent(b, "turn.completed", threadId, resumed.seq, 120_000)
      expect(done.event.payload).toMatchObject({ status: "completed" })
      const request = JSON.stringify(mock.mainRequests()[before]!.body.messages)
      expect(request).toContain(FIRST_TEXT)
      expect(request).toContain("Casual")
      expect(request).toContain("Now write greet.js")
    } finally {
      await b.close()
    }
    expectGapFree(await allEvents(server, threadId, 1))
    // The thread's HOME now lives in the data dir: the CLI left no copy of the API key in it.
    expect(filesContaining(dataDir, API_KEY)).toEqual([])
  })
})
