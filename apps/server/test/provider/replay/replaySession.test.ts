import { ThreadId, type RuntimeEvent } from "@planbridge/contracts"
import { Effect, Exit, Scope } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { checkAnswer } from "../../../src/provider/kernel/CheckedAnswer.ts"
import type { ProviderSession } from "../../../src/provider/ProviderAdapter.ts"
import { makeReplayAdapter } from "../../../src/provider/replay/ReplayAdapter.ts"
import { loadReplayDirectory, type Recording } from "../../../src/provider/replay/ReplayDirectory.ts"
import { withThreadIds } from "../../../src/provider/replay/ReplayIds.ts"
import { beforeClosingExit, scriptOf, type Gate } from "../../../src/provider/replay/ReplayScript.ts"

/**
 * Every shipped fixture, played by the replay provider with the recorded client's own commands
 * at each gate, emits exactly its golden events (ids, times and the session's envelope aside):
 * the cuts lose nothing, reorder nothing, and each gate takes the command that was recorded there.
 */
const fixtures = fileURLToPath(new URL("../../../../../fixtures/", import.meta.url))
const recordings = await Effect.runPromise(loadReplayDirectory(fixtures))

/** What an event says, without what a session stamps (id, time, provider, thread). */
const content = (event: RuntimeEvent) => {
  const { eventId: _id, createdAt: _at, provider: _p, threadId: _t, ...rest } = event
  return JSON.parse(JSON.stringify(rest)) as unknown
}

const golden = (recording: Recording): ReadonlyArray<RuntimeEvent> =>
  readFileSync(join(fixtures, recording.path.replace(/\.jsonl$/u, ".events.jsonl")), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as RuntimeEvent)

/** Sends the recorded client's command at `gate`. */
const command = (session: ProviderSession, gate: Gate, prompts: Map<string, RuntimeEvent>) => {
  switch (gate.kind) {
    case "turn":
      return Effect.asVoid(
        session.startTurn({ text: gate.text ?? "", ...(gate.mode === undefined ? {} : { mode: gate.mode }) })
      )
    case "mode":
      return session.setMode(gate.mode)
    case "answer": {
      const asked = prompts.get(gate.promptId)
      if (asked?.type !== "user-input.requested") throw new Error(`no prompt ${gate.promptId}`)
      const checked = checkAnswer(asked.payload.prompt, { promptId: gate.promptId, answers: gate.answers })
      if (!checked.ok) throw new Error(checked.error.message)
      return session.respondToUserInput(checked.checked)
    }
    case "dismiss":
      return session.dismissUserInput(gate.promptId, gate.resolution)
    case "request":
      return session.respondToRequest(gate.requestId, gate.optionId)
    case "plan":
      return session.decidePlan({
        planId: gate.planId,
        decision: gate.decision,
        ...(gate.feedback === undefined ? {} : { feedback: gate.feedback }),
        ...(gate.editedMarkdown === undefined ? {} : { editedMarkdown: gate.editedMarkdown })
      })
    case "interrupt":
      return session.interrupt()
  }
}

describe("the replay provider plays each fixture as recorded", () => {
  it.each(recordings.map((r) => [r.path, r] as const))("%s", async (_path, recording) => {
    // The golden files' thread (ACP's ids come from it too once the meta line's prefix is gone).
    const threadId = ThreadId.make(golden(recording)[0]!.threadId)
    const emitted: Array<RuntimeEvent> = []
    const adapter = makeReplayAdapter(recording, { strict: true, speed: 0 })
    const expected = await Effect.runPromise(
      Effect.flatMap(recording.replay(recording.lines, { threadId }), (events) => withThreadIds(events, threadId))
    )
    const script = scriptOf(expected)
    await Effect.runPromise(
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const session = yield* adapter
          .startSession({
            threadId,
            cwd: "/replayed",
            mode: recording.recordedMode,
            emit: (event) => Effect.sync(() => void emitted.push(event)),
            emitAll: (events) => Effect.sync(() => void emitted.push(...events))
          })
          .pipe(Scope.provide(scope))
        const prompts = new Map<string, RuntimeEvent>()
        for (const segment of script.slice(1)) {
          for (const e of emitted) if (e.type === "user-input.requested") prompts.set(e.payload.prompt.promptId, e)
          // The player reaches the gate once the segment before it has played.
          const before = emitted.length
          yield* Effect.eventually(
            Effect.suspend(() => command(session, segment.gate!, prompts)).pipe(
              Effect.catchTag("AdapterError", (e) => (e.kind === "busy" ? Effect.fail(e) : Effect.die(e)))
            )
          )
          expect(emitted.length).toBeGreaterThan(before)
        }
        const total = script.reduce((n, s) => n + s.bursts.reduce((m, b) => m + b.events.length, 0), 0)
        yield* Effect.eventually(Effect.suspend(() => (emitted.length >= total ? Effect.void : Effect.fail("playing"))))
        yield* Scope.close(scope, Exit.void)
      })
    )
    // A recorder's closing exit is left out and the session's own close says it; any other is played.
    const body = beforeClosingExit(expected)
    const closing = body.length < expected.length
    expect(emitted.at(-1)?.type).toBe("session.exited")
    expect(emitted).toHaveLength(body.length + (closing ? 1 : 0))
    // The session's own cwd, and never resumable: the two things a replay changes.
    const adjusted = body.map((event): RuntimeEvent => {
      const noResume = { supportsResume: false }
      if (event.type === "session.started") return { ...event, payload: { ...event.payload, cwd: "/replayed" } }
      if (event.type === "capabilities.changed")
        return { ...event, payload: { capabilities: { ...event.payload.capabilities, ...noResume } } }
      if (event.type === "session.configured")
        return { ...event, payload: { ...event.payload, capabilities: { ...event.payload.capabilities, ...noResume } } }
      return event
    })
    expect(emitted.slice(0, adjusted.length).map(content)).toEqual(adjusted.map(content))
    expect(emitted.every((e) => e.provider === recording.name && e.threadId === threadId)).toBe(true)
    expect(new Set(emitted.map((e) => e.eventId)).size).toBe(emitted.length)
  })
})

describe("two sessions of one recording", () => {
  it("have their own prompt, request and plan ids, whatever the recorded provider derived them from", async () => {
    const recording = recordings.find((r) => r.path === "codex/plan-two-questions.jsonl")!
    const idsOf = async (threadId: ThreadId) => {
      const events = await Effect.runPromise(
        Effect.flatMap(recording.replay(recording.lines, { threadId }), (e) => withThreadIds(e, threadId))
      )
      return events.flatMap((e): ReadonlyArray<string> => {
        if (e.type === "request.opened")
          return [e.payload.requestId, ...(e.payload.promptId === undefined ? [] : [e.payload.promptId])]
        return e.type === "plan.proposed.completed" ? [e.payload.planId] : []
      })
    }
    const [a, b] = [await idsOf(ThreadId.make("thread-a")), await idsOf(ThreadId.make("thread-b"))]
    expect(a.length).toBeGreaterThanOrEqual(3)
    expect(a.every((id) => /^thread-a[:/]/.test(id))).toBe(true)
    expect(b.every((id) => /^thread-b[:/]/.test(id))).toBe(true)
  })
})

describe("a session started in another mode than the recording", () => {
  it("plays, strict or not, with a warning naming both modes before the recorded events", async () => {
    const recording = recordings.find((r) => r.path === "claude/tasks.jsonl")!
    expect(recording.recordedMode).toBe("default")
    const emitted: Array<RuntimeEvent> = []
    const adapter = makeReplayAdapter(recording, { strict: true, speed: 0 })
    await Effect.runPromise(
      Effect.scoped(
        adapter.startSession({
          threadId: ThreadId.make("thread-mode"),
          cwd: "/replayed",
          mode: "plan",
          emit: (event) => Effect.sync(() => void emitted.push(event)),
          emitAll: (events) => Effect.sync(() => void emitted.push(...events))
        })
      )
    )
    const warning = emitted.find((e) => e.type === "runtime.warning")
    expect(warning?.type === "runtime.warning" && warning.payload.message).toContain(
      "session mode 'plan', recorded 'default'"
    )
    // Closing the scope ended the session as a provider's would.
    expect(emitted.at(-1)?.type).toBe("session.exited")
  })
})
