import type { PlanbridgeClient } from "@planbridge/client"
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  connectReplay,
  descendantsOf,
  programsStartedBy,
  startRecordedSession,
  startReplayServer,
  type ReplayServer
} from "../src/index.ts"

/**
 * `planbridge serve --replay fixtures/` as a child process, driven through the client library by
 * the kit: recorded sessions play as live ones, answers as recorded pass silently, a different
 * one passes with a warning (lenient) or is refused (--replay-strict), and no provider program
 * is ever started.
 */
const fixtures = fileURLToPath(new URL("../../../fixtures/", import.meta.url))
let lenient: ReplayServer
let strict: ReplayServer
let lenientClient: PlanbridgeClient
let strictClient: PlanbridgeClient
const scratch = mkdtempSync(join(tmpdir(), "planbridge-testkit-"))

beforeAll(async () => {
  ;[lenient, strict] = await Promise.all([
    startReplayServer({ dir: fixtures }),
    startReplayServer({ dir: fixtures, strict: true })
  ])
  ;[lenientClient, strictClient] = await Promise.all([connectReplay(lenient), connectReplay(strict)])
}, 60_000)

afterAll(async () => {
  lenientClient?.close()
  strictClient?.close()
  await Promise.all([lenient?.close(), strict?.close()])
  rmSync(scratch, { recursive: true, force: true })
})

/** The recorded answers of a fixture's prompts, in order, from its golden events. */
const recordedAnswers = (fixture: string) =>
  readFileSync(join(fixtures, `${fixture}.events.jsonl`), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { type: string; payload: { answers?: unknown } })
    .filter((e) => e.type === "user-input.resolved")
    .map((e) => e.payload.answers)

describe("serve --replay", () => {
  it("offers every fixture as a provider with its recorded capabilities, never resumable", () => {
    const names = lenientClient.providers.map((p) => p.provider)
    expect(names).toContain("claude-plan-session")
    expect(names).toContain("codex-plan-two-questions")
    expect(names).toContain("cursor-scripted-cursor-plan-question-permission-elicit-cancel")
    expect(names.some((n) => n.endsWith("events"))).toBe(false)
    const claude = lenientClient.providers.find((p) => p.provider === "claude-plan-session")!
    expect(claude.capabilities).toMatchObject({ supportsPlanMode: true, supportsExitPlanMode: true })
    expect(claude.capabilities.supportsResume).toBe(false)
  })

  it("plays claude/plan-session: the question answered and the plan approved as recorded, no warning, ≤ 2 s", async () => {
    const started = performance.now()
    const thread = await startRecordedSession(lenientClient, "claude-plan-session", { cwd: scratch })
    await thread.send("Plan a tiny greeting CLI")
    const prompt = await thread.waitForPrompt()
    expect(prompt.promptId.startsWith(thread.threadId)).toBe(true)
    await thread.choose(prompt, ["Casual"], ["Colors", "Emoji"])
    const plan = await thread.waitForPlan()
    // Mid-session, no provider below the server. The tree is read for real (the server is found
    // below this test's process); a replay starts no provider group, so no watchdog either.
    expect(descendantsOf(process.pid).some((p) => p.pid === lenient.pid)).toBe(true)
    expect(programsStartedBy(lenient.pid)).toEqual([])
    expect(plan.markdown).toContain("# Plan: greeting CLI")
    await thread.decidePlan(plan, "approved")
    const turn = await thread.waitForTurnEnd()
    const elapsed = performance.now() - started
    expect(turn.status).toBe("completed")
    expect(thread.snapshot()?.items.some((i) => i.text === "Plan approved. Done.")).toBe(true)
    expect(thread.events.filter((e) => e.type === "runtime.warning")).toEqual([])
    expect(elapsed).toBeLessThan(2_000)
    console.info(`claude/plan-session replayed in ${Math.round(elapsed)} ms`)
    expect(programsStartedBy(lenient.pid)).toEqual([])
    await thread.close()
  })

  it("lenient: a different answer is accepted, reported by a runtime.warning, and the recording continues", async () => {
    const thread = await startRecordedSession(lenientClient, "codex-plan-two-questions", { cwd: scratch })
    await thread.send("Plan a small HTTP service for me.")
    const prompt = await thread.waitForPrompt()
    await thread.choose(prompt, ["PostgreSQL (Recommended)"], ["Unit only (Recommended)"])
    const turn = await thread.waitForTurnEnd()
    expect(turn.status).toBe("completed")
    const warnings = thread.events.filter((e) => e.type === "runtime.warning")
    expect(warnings).toHaveLength(1)
    const [warning] = warnings
    expect(warning?.type === "runtime.warning" && warning.payload.code).toBe("replay.answer_differs")
    expect(warning?.type === "runtime.warning" && warning.payload.message).toContain("question 'db_choice'")
    // The recorded continuation: the plan the recording proposed after its own answer.
    await thread.until("proposed plan", (s) => s.proposedPlans.find((p) => p.markdown !== null))
    await thread.close()
  })

  it("strict: a different answer is refused with the difference, the recorded one then continues", async () => {
    const thread = await startRecordedSession(strictClient, "codex-plan-two-questions", { cwd: scratch })
    await thread.send("Plan a small HTTP service for me.")
    const prompt = await thread.waitForPrompt()
    const refused = thread.choose(prompt, ["PostgreSQL (Recommended)"], ["Unit only (Recommended)"])
    await expect(refused).rejects.toMatchObject({ code: "invalid_answer" })
    await expect(refused).rejects.toThrow(/question 'db_choice'.*--replay-strict/u)
    expect(thread.snapshot()?.prompts.find((p) => p.promptId === prompt.promptId)?.status).toBe("pending")
    const [recorded] = recordedAnswers("codex/plan-two-questions")
    await thread.answer(prompt, recorded as Parameters<typeof thread.answer>[1])
    expect((await thread.waitForTurnEnd()).status).toBe("completed")
    expect(thread.events.filter((e) => e.type === "runtime.warning")).toEqual([])
    await thread.close()
  })

  it("a command the recording does not have there is refused, naming what it waits for", async () => {
    const thread = await startRecordedSession(strictClient, "claude-plan-session", { cwd: scratch })
    await thread.send("Plan a tiny greeting CLI")
    await thread.waitForPrompt()
    await expect(thread.send("something else")).rejects.toMatchObject({ code: "busy" })
    await expect(thread.interrupt()).rejects.toThrow(/waits for an answer to prompt/u)
    await thread.close()
  })

  it("a speed out of its bounds, or --replay-strict without --replay, is a usage error", async () => {
    await expect(startReplayServer({ dir: fixtures, speed: 1001 })).rejects.toThrow(/replay-speed/u)
    await expect(startReplayServer({ dir: fixtures, speed: -1 })).rejects.toThrow(/replay-speed/u)
  })

  it("a directory that does not exist, or a transcript that is not JSON, stops the server with the path", async () => {
    await expect(startReplayServer({ dir: join(scratch, "missing") })).rejects.toThrow(
      /--replay: .*missing: no such directory/u
    )
    const bad = join(scratch, "bad")
    mkdirSync(join(bad, "claude"), { recursive: true })
    writeFileSync(
      join(bad, "claude", "broken.jsonl"),
      `${JSON.stringify({ dir: "meta", provider: "claude", startedAt: "2026-01-01T00:00:00.000Z" })}\n{"t": 1,\n`
    )
    await expect(startReplayServer({ dir: bad })).rejects.toThrow(/claude\/broken\.jsonl:2: not JSON/u)
    writeFileSync(join(bad, "claude", "broken.jsonl"), `${JSON.stringify({ dir: "meta", provider: "gemini" })}\n`)
    await expect(startReplayServer({ dir: bad })).rejects.toThrow(/broken\.jsonl:1: the first line must be/u)
  })
})
