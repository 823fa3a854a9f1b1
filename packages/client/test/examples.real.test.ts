import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { serverSnapshot } from "./support/realServer.ts"
import { buildClient, runExample, startDemoServer, type DemoServer } from "./support/demoServer.ts"

/**
 * The documented examples (packages/client/examples, README.md) run as a user runs them: plain
 * Node 20 with no TypeScript loader, loading the built package, against the real server in demo
 * mode (the real Codex app-server against the scripted model).
 */

/** Real programs on a shared 2-core machine: generous. */
const STEP_MS = 120_000
const PROVIDER = "codex"

let rig: DemoServer
/**
 * The thread's turns as the server records them, once it holds `count`. `turn.start` answers with
 * the turn's id once the provider took the turn, and an example may exit then; the turn's
 * `turn.started` is recorded when the provider announces it (Codex's `turn/started` may follow its
 * response), so the server is asked again until it holds them, for at most 10 s.
 */
const turnsRecorded = (threadId: string, count: number) =>
  expect
    .poll(async () => (await serverSnapshot(rig.server, threadId)).turns.length, { timeout: 10_000, interval: 50 })
    .toBe(count)

const run = (name: string, timeoutMs = STEP_MS, provider = PROVIDER) =>
  runExample(name, [provider], { url: rig.server.url, token: rig.server.token, cwd: rig.cwd }, timeoutMs)
const threadIdIn = (stdout: string): string => {
  const id = /thread (\S+)/.exec(stdout)?.[1]
  if (id === undefined) throw new Error(`no thread id printed:\n${stdout}`)
  return id
}

beforeAll(async () => {
  await buildClient()
  rig = await startDemoServer()
}, STEP_MS)
afterAll(async () => rig?.close())

describe("the client's examples, from plain Node on its build", () => {
  it("connect: lists the providers", async () => {
    const { code, stdout, stderr } = await run("connect.mjs").exited
    expect(stderr).toBe("")
    expect(code).toBe(0)
    expect(stdout).toContain("codex: Codex (demo) ready=")
    expect(stdout).toContain("threads: ")
  })

  it(
    "start-session: a thread with its first turn, as the server records it",
    async () => {
      const { code, stdout, stderr } = await run("start-session.mjs").exited
      expect(stderr).toBe("")
      expect(code).toBe(0)
      const threadId = threadIdIn(stdout)
      await turnsRecorded(threadId, 1)
      expect((await serverSnapshot(rig.server, threadId)).provider).toBe(PROVIDER)
    },
    STEP_MS
  )

  it(
    "follow-thread: the checklist as it changes, then the turn's end",
    async () => {
      const { code, stdout, stderr } = await run("follow-thread.mjs").exited
      expect(stderr).toBe("")
      expect(code).toBe(0)
      expect(stdout).toContain(
        "checklist: [completed] Read the code, [completed] Write the change, [completed] Run the tests"
      )
      expect(stdout).toContain("turn completed")
    },
    STEP_MS
  )

  it(
    "answer-prompt: the question's answer reaches the server",
    async () => {
      const { code, stdout, stderr } = await run("answer-prompt.mjs").exited
      expect(stderr).toBe("")
      expect(code).toBe(0)
      expect(stdout).toContain("prompt answered: 2 answer(s)")
      const snapshot = await serverSnapshot(rig.server, threadIdIn(stdout))
      expect(snapshot.prompts.map((p) => [p.status, p.resolution])).toEqual([["resolved", "answered"]])
    },
    STEP_MS
  )

  it(
    // Claude's plans wait for a decision (Codex's end the turn: `supportsExitPlanMode`).
    "decide-plan: the proposed plan, approved",
    async () => {
      const { code, stdout, stderr } = await run("decide-plan.mjs", STEP_MS, "claude").exited
      expect(stderr).toBe("")
      expect(code).toBe(0)
      expect(stdout).toContain("# Plan: a small greeting service")
      expect(stdout).toContain("plan approved")
      const snapshot = await serverSnapshot(rig.server, threadIdIn(stdout))
      expect(snapshot.proposedPlans.map((p) => p.decision)).toEqual(["approved"])
    },
    STEP_MS
  )

  it(
    "reconnect: back after a server restart, the thread resumed and taking turns",
    async () => {
      const example = run("reconnect.mjs", STEP_MS * 2)
      await example.printed("following thread ")
      await rig.restart()
      const { code, stdout, stderr } = await example.exited
      expect(stderr).toBe("")
      expect(code).toBe(0)
      expect(stdout).toContain("status: reconnecting")
      expect(stdout).toMatch(/reconnected: resumed=true, turn \S+/)
      // The turn before the restart and the one after it, on the same thread.
      await turnsRecorded(threadIdIn(stdout), 2)
    },
    STEP_MS * 2
  )
})
