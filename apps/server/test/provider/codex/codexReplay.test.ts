import { decodeRuntimeEventSync, type RuntimeEvent, type ThreadId } from "@planbridge/contracts"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { codexReplayMapping } from "../../../src/provider/codex/CodexReplay.ts"
import { replay as kernelReplay } from "../../../src/provider/kernel/replay.ts"
import { replayLineOf } from "../../../src/provider/kernel/ReplayError.ts"
import { loadCodexFixtures, type CodexFixture } from "./fixtures.ts"

/**
 * Recorded real transcripts (fixtures/codex, made by scripts/record-codex-fixtures.ts) replay to
 * their golden canonical events, deterministically; and each golden file says what it should.
 */

const fixtures = loadCodexFixtures()
const byName = (name: string): CodexFixture => {
  const fixture = fixtures.find((f) => f.name === name)
  if (fixture === undefined) throw new Error(`missing fixture ${name}`)
  return fixture
}
const replay = (fixture: CodexFixture) =>
  Effect.runPromise(kernelReplay(codexReplayMapping, fixture.lines, { threadId: fixture.threadId }))
const ofType = <T extends RuntimeEvent["type"]>(events: ReadonlyArray<RuntimeEvent>, type: T) =>
  events.filter((e): e is Extract<RuntimeEvent, { readonly type: T }> => e.type === type)

describe("Codex transcript replay", () => {
  it("has the recorded scenarios", () => {
    expect(fixtures.map((f) => f.name)).toEqual([
      "default-command-approval",
      "default-question-freeform",
      "default-steer-nonblocking",
      "default-update-plan",
      "dismiss-question-empty",
      "interrupt-pending-question",
      "kill-pending-question",
      "parallel-questions",
      "plan-two-questions",
      "plan-unclosed-tag",
      "resume-thread"
    ])
  })

  for (const fixture of fixtures) {
    it(`${fixture.name}: replays to its golden events, valid and deterministic`, async () => {
      const events = await replay(fixture)
      expect(JSON.parse(JSON.stringify(events))).toEqual(fixture.golden)
      for (const event of events) expect(decodeRuntimeEventSync(event)).toEqual(event)
      expect(new Set(events.map((e) => e.eventId)).size).toBe(events.length)
      expect(await replay(fixture)).toEqual(events)
      // Every native message the mapping read decoded cleanly.
      const expected = new Set(["codex.config_warning", "codex.steered"])
      expect(ofType(events, "runtime.warning").filter((e) => !expected.has(e.payload.code))).toEqual([])
      expect(events.every((e) => e.raw !== undefined)).toBe(true)
    })
  }

  it("plan-two-questions: the answered prompt and the authoritative proposed plan", async () => {
    const events = await replay(byName("plan-two-questions"))
    const [resolved] = ofType(events, "user-input.resolved")
    expect(resolved?.payload).toMatchObject({
      resolution: "answered",
      answers: [
        { questionId: "db_choice", selectedOptionIds: ["opt-1"] },
        { questionId: "test_scope", selectedOptionIds: ["opt-0"], text: "plus fuzzing" }
      ]
    })
    const [plan] = ofType(events, "plan.proposed.completed")
    expect(plan?.payload.markdown).toBe("# Build the service\n\n1. Use SQLite.\n2. Write unit tests, plus fuzzing.\n")
    const planItem = ofType(events, "item.completed").find((e) => e.payload.itemType === "plan")
    expect(planItem?.turnId).toBe(plan?.turnId)
    expect(plan?.payload.planId).toBe(planItem?.itemId)
    expect(ofType(events, "item.completed").find((e) => e.payload.itemType === "assistant_message")?.payload.text).toBe(
      "Thanks for the answers. Here is my plan.\n\n"
    )
  })

  it("interrupt-pending-question: cancelled with the turn, the late answer never on the wire", async () => {
    const fixture = byName("interrupt-pending-question")
    const events = await replay(fixture)
    const resolved = ofType(events, "user-input.resolved")
    expect(resolved.map((e) => e.payload.resolution)).toEqual(["cancelled"])
    const completed = ofType(events, "turn.completed")
    expect(completed.map((e) => e.payload.status)).toEqual(["interrupted", "completed"])
    expect(events.indexOf(resolved[0]!)).toBeLessThan(events.indexOf(completed[0]!))
    const answers = fixture.lines.filter(
      (l) => l.dir === "out" && typeof l.msg === "object" && l.msg !== null && "result" in l.msg
    )
    expect(answers).toEqual([])
  })

  it("kill-pending-question: provider_exited for the prompt, the request and the turn", async () => {
    const events = await replay(byName("kill-pending-question"))
    expect(ofType(events, "user-input.resolved").map((e) => e.payload.resolution)).toEqual(["provider_exited"])
    expect(ofType(events, "request.resolved").map((e) => e.payload.resolution)).toEqual(["provider_exited"])
    expect(ofType(events, "turn.completed").map((e) => e.payload.status)).toEqual(["failed"])
    expect(ofType(events, "session.exited").map((e) => e.payload)).toEqual([
      { exitKind: "killed", exitCode: null, signal: "SIGKILL" }
    ])
  })

  it("default-update-plan: three full snapshots, two steps in progress accepted, then cleared", async () => {
    const events = await replay(byName("default-update-plan"))
    expect(ofType(events, "turn.plan.updated").map((e) => e.payload.plan.steps.map((s) => s.status))).toEqual([
      ["inProgress", "pending"],
      ["completed", "inProgress", "inProgress"],
      []
    ])
  })

  it("the other question outcomes: serialized parallel questions, free text, an empty dismissal", async () => {
    const parallel = await replay(byName("parallel-questions"))
    // One question per request, in no fixed order (the app-server serializes them as it likes).
    expect(
      ofType(parallel, "user-input.requested")
        .map((e) => e.payload.prompt.questions.map((q) => q.id))
        .toSorted()
    ).toEqual([["db_choice"], ["test_scope"]])
    expect(ofType(parallel, "user-input.resolved").map((e) => e.payload.resolution)).toEqual(["answered", "answered"])
    const freeform = await replay(byName("default-question-freeform"))
    expect(ofType(freeform, "user-input.requested")[0]?.payload.prompt.blocking).toBe(false)
    expect(ofType(freeform, "user-input.resolved")[0]?.payload.answers).toEqual([
      { questionId: "db_choice", text: "DuckDB, embedded" }
    ])
    const dismissed = await replay(byName("dismiss-question-empty"))
    expect(ofType(dismissed, "user-input.resolved")[0]?.payload).toMatchObject({ resolution: "empty", answers: [] })
    const unclosed = await replay(byName("plan-unclosed-tag"))
    expect(ofType(unclosed, "plan.proposed.completed")[0]?.payload.markdown).toBe(
      "# Short plan\n\n- Only one step, and the closing tag never comes"
    )
  })

  it("default-command-approval and default-steer-nonblocking: the approval answered, the steering reported", async () => {
    const approval = await replay(byName("default-command-approval"))
    const [opened] = ofType(approval, "request.opened")
    expect(opened?.payload.requestKind).toBe("approval")
    // What runs and where, structured: the recorded command and the session's working directory.
    expect(opened?.payload.command).toBe("/bin/bash -lc 'echo planbridge-ran > marker.txt'")
    expect(opened?.payload.cwd).toMatch(/^\/.*planbridge-codex-cwd-/)
    expect(ofType(approval, "request.resolved").map((e) => e.payload)).toEqual([
      { requestId: opened?.payload.requestId, resolution: "responded", optionId: "accept" }
    ])
    expect(ofType(approval, "session.state.changed").map((e) => e.payload.flags)).toContainEqual(["waitingOnApproval"])
    const steer = await replay(byName("default-steer-nonblocking"))
    const turns = new Set(ofType(steer, "turn.started").map((e) => e.turnId))
    expect(turns.size).toBe(1)
    expect(
      ofType(steer, "runtime.warning")
        .filter((e) => e.payload.code === "codex.steered")
        .map((e) => e.turnId)
    ).toEqual([...turns])
    expect(
      ofType(steer, "item.completed")
        .filter((e) => e.payload.itemType === "user_message")
        .map((e) => e.payload.text)
    ).toEqual(["Start.", "Also consider this."])
  })

  it("resume-thread: a resumed session says so and carries on", async () => {
    const events = await replay(byName("resume-thread"))
    expect(ofType(events, "session.started").map((e) => e.payload.resumed)).toEqual([true])
    expect(ofType(events, "turn.completed").map((e) => e.payload.status)).toEqual(["completed"])
  })

  it("refuses what is not a Codex transcript with a typed error naming the line", async () => {
    const run = (lines: ReadonlyArray<unknown>) =>
      Effect.runPromise(Effect.flip(kernelReplay(codexReplayMapping, lines, { threadId: "t" as ThreadId })))
    const noMeta = await run([{ t: 0, dir: "in", msg: {} }])
    expect(noMeta).toMatchObject({ _tag: "AdapterError", kind: "invalid_transcript" })
    expect(replayLineOf(noMeta)).toBe(0)
    const badLine = await run([
      { dir: "meta", provider: "codex", startedAt: "2026-11-30T00:00:00.000Z" },
      { t: 1, dir: "out", msg: {} },
      { t: "soon", dir: "sideways" }
    ])
    expect(replayLineOf(badLine)).toBe(2)
    expect((await run([{ dir: "meta", provider: "claude", startedAt: "2026-11-30T00:00:00.000Z" }])).message).toContain(
      "not a Codex transcript"
    )
    expect(replayLineOf(await run(["{not json"]))).toBe(0)
  })
})
