import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it, onTestFinished } from "vitest"
import { startDemoProviders } from "../../src/demo/DemoProviders.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { STEP_MS } from "./demoRig.ts"
import { serverLife } from "./serverLife.ts"

/**
 * Issue 27, item 4, with the real claude-agent-acp in demo mode: a thread survives the server's
 * restart as `planbridge serve --demo` restarts (new demo models, new processes), because the
 * agent's home is the thread's directory in the data dir, not a scratch directory of the old
 * process in /tmp (which a SIGKILL left behind, and whose loss made every resume fail "Resource
 * not found"). A resume the agent refuses adds nothing to the thread and says why without the
 * agent's stderr.
 */

const dirs: Array<string> = []
const newDir = (label: string) => {
  const dir = mkdtempSync(join(tmpdir(), `planbridge-acp-resume-${label}-`))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/**
 * What the demo leaves in the temp dir under the names its scratch homes had. The test's own
 * TMPDIR (os.tmpdir() reads it at each call), so that other processes' demos do not count.
 */
const demoScratch = (dir: string) =>
  readdirSync(dir).filter((name) => /^planbridge-demo-(codex|claude)-acp-/.test(name))

describe("demo mode: an ACP thread resumes after a restart", { timeout: STEP_MS * 5 }, () => {
  it("claude-agent-acp: the home is the thread's, the resume continues it; a refused one adds nothing", async () => {
    assertLoopbackOnly()
    const dataDir = newDir("data")
    const cwd = newDir("cwd")
    const ownTmp = newDir("tmp")
    const savedTmp = process.env.TMPDIR
    process.env.TMPDIR = ownTmp
    onTestFinished(() => {
      if (savedTmp === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = savedTmp
    })
    let demo = await startDemoProviders()
    let current = await serverLife(dataDir, demo.providers)
    try {
      const { threadId } = (await current.ok({
        type: "session.start",
        provider: "acp-claude",
        cwd,
        mode: "default"
      })) as {
        threadId: string
      }
      await current.ok({ type: "thread.subscribe", threadId: threadId as never, afterSeq: 0 })
      const started = await current.waitEvent("session.started", threadId)
      // The agent's home is the thread's directory in the data dir; nothing of the demo's in /tmp.
      expect(started.event.type === "session.started" && started.event.payload.providerHome).toBe(
        join(dataDir, "homes", threadId)
      )
      expect(demoScratch(ownTmp)).toEqual([])
      await current.ok({ type: "turn.start", threadId: threadId as never, text: "Remember the word mango." })
      await current.waitEvent("turn.completed", threadId)

      // Restarted as `serve --demo` restarts: the old models and processes are gone.
      await current.close()
      await demo.close()
      demo = await startDemoProviders()
      current = await serverLife(dataDir, demo.providers)
      await current.ok({ type: "thread.subscribe", threadId: threadId as never, afterSeq: 0 })
      const exited = await current.waitEvent("session.exited", threadId)
      expect(await current.ok({ type: "thread.resume", threadId: threadId as never })).toMatchObject({ resumed: true })
      const resumed = await current.waitEvent("session.started", threadId, exited.seq)
      await current.ok({ type: "turn.start", threadId: threadId as never, text: "Which word was it?" })
      await current.waitEvent("turn.completed", threadId, resumed.seq)
      // The new model was given the conversation from before the restart. The agent also makes
      // auxiliary requests (which may come last), so look at the ones asking the new question.
      const asking = demo.models
        .claudeAcp!.requests.map((request) => JSON.stringify(request))
        .filter((text) => text.includes("Which word was it?"))
      expect(asking.length).toBeGreaterThan(0)
      expect(asking.some((text) => text.includes("Remember the word mango."))).toBe(true)

      // The agent's saved session is lost (its home kept): the agent refuses session/resume.
      await current.close()
      await demo.close()
      rmSync(join(dataDir, "homes", threadId, ".claude", "projects"), { recursive: true, force: true })
      demo = await startDemoProviders()
      current = await serverLife(dataDir, demo.providers)
      await current.ok({ type: "thread.subscribe", threadId: threadId as never, afterSeq: 0 })
      await current.waitEvent("session.exited", threadId, resumed.seq)
      const before = (await current.stored(threadId)).seq
      for (let attempt = 0; attempt < 2; attempt++) {
        const frame = await current.client.command({ type: "thread.resume", threadId: threadId as never })
        if (frame.type !== "error") throw new Error(`expected resume_failed, got ${JSON.stringify(frame)}`)
        expect(frame.error.code).toBe("resume_failed")
        expect(frame.error.message).toMatch(/^acp-claude could not resume session '[^']+' of thread '[^']+': /)
        expect(frame.error.message).not.toMatch(/stderr/i)
      }
      // Nothing was recorded on the thread by either failed try (before: a session.exited each).
      expect((await current.stored(threadId)).seq).toBe(before)
    } finally {
      await current.close()
      await demo.close()
    }
  })
})
