import { decodeRuntimeEventSync, ThreadId, type RuntimeEvent } from "@planbridge/contracts"
import { Effect, Exit } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { step } from "../../../src/provider/acp/AcpMapping.ts"
import { acpReplayMapping } from "../../../src/provider/acp/AcpReplay.ts"
import { initialAcpState, type AcpState } from "../../../src/provider/acp/AcpState.ts"
import { builtinAcpProfiles } from "../../../src/provider/acp/profiles/index.ts"
import type { TranscriptEntry } from "../../../src/provider/kernel/transcript.ts"
import { replay as kernelReplay } from "../../../src/provider/kernel/replay.ts"

const fixtures = resolve(import.meta.dirname, "../../../../../fixtures")
const readJsonl = (path: string): Array<unknown> =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as unknown)

const transcripts = ["cursor", "acp"].flatMap((dir) =>
  readdirSync(join(fixtures, dir))
    .filter((file) => file.endsWith(".jsonl") && !file.endsWith(".events.jsonl"))
    .map((file) => ({ dir, name: file.replace(/\.jsonl$/, "") }))
)

const replay = (lines: ReadonlyArray<unknown>, name: string) =>
  Effect.runPromise(kernelReplay(acpReplayMapping, lines, { threadId: ThreadId.make(`fixture-${name}`) }))

/** The whole mapping state as text, its Maps included. */
const snapshot = (state: AcpState) =>
  JSON.stringify({
    ...state,
    pending: [...state.pending],
    outbound: [...state.outbound],
    items: { ...state.items, tools: [...state.items.tools] }
  })

describe("replay over the recorded ACP fixtures", () => {
  it("has a transcript for the scripted Cursor agent and for both real ACP agents", () => {
    const providers = transcripts.map(
      ({ dir, name }) => (readJsonl(join(fixtures, dir, `${name}.jsonl`))[0] as { provider: string }).provider
    )
    expect(new Set(providers)).toEqual(new Set(["cursor", "acp-codex", "acp-claude"]))
  })

  for (const { dir, name } of transcripts) {
    it(`${dir}/${name}: reproduces the golden events, deterministically, each a valid RuntimeEvent with its raw payload`, async () => {
      const lines = readJsonl(join(fixtures, dir, `${name}.jsonl`))
      const golden = readJsonl(join(fixtures, dir, `${name}.events.jsonl`))
      const events = await replay(lines, name)
      expect(JSON.parse(JSON.stringify(events))).toEqual(golden)
      expect(await replay(lines, name)).toEqual(events)
      for (const event of golden) expect(decodeRuntimeEventSync(event).raw).toBeDefined()
    })
  }

  it("the Cursor fixture carries every mapped concept", async () => {
    const name = transcripts.find((t) => t.dir === "cursor")!.name
    const events: ReadonlyArray<RuntimeEvent> = await replay(readJsonl(join(fixtures, "cursor", `${name}.jsonl`)), name)
    const types = new Set(events.map((e) => e.type))
    for (const type of [
      "mode.changed",
      "content.delta",
      "turn.plan.updated",
      "capabilities.changed",
      "user-input.requested",
      "user-input.resolved",
      "plan.proposed.completed",
      "plan.decision",
      "request.opened",
      "request.resolved",
      "runtime.warning",
      "session.exited"
    ] as const) {
      expect(types.has(type), type).toBe(true)
    }
    expect(
      events.filter((e) => e.type === "turn.completed").map((e) => e.type === "turn.completed" && e.payload.status)
    ).toEqual(["completed", "interrupted", "completed", "completed"])
  })

  it("the claude-agent-acp fixture turns ExitPlanMode into a proposed plan, a plan approval and its decision", async () => {
    const name = transcripts.find((t) => t.name.startsWith("claude-agent-acp-0.23.1"))!.name
    const events = await replay(readJsonl(join(fixtures, "acp", `${name}.jsonl`)), name)
    const proposed = events.find((e) => e.type === "plan.proposed.completed")
    const opened = events.find((e) => e.type === "request.opened" && e.payload.requestKind === "plan_approval")
    const decision = events.find((e) => e.type === "plan.decision")
    expect(proposed?.type === "plan.proposed.completed" && proposed.payload.markdown).toContain("Create hi.txt")
    expect(opened?.type === "request.opened" && opened.payload.planId).toBe(
      proposed?.type === "plan.proposed.completed" && proposed.payload.planId
    )
    expect(decision?.type === "plan.decision" && decision.payload.decision).toBe("approved")
  })

  it("the codex-acp 2.6.0 fixture: plan mode by collaboration_mode, an elicitation answered, plan_update plans, revise_plan then implement_plan", async () => {
    const name = "codex-acp-2.6.0-collaboration-plan-elicitation-review"
    const lines = readJsonl(join(fixtures, "acp", `${name}.jsonl`))
    expect((lines[0] as { agent: string }).agent).toBe("@agentclientprotocol/codex-acp 2.6.0")
    const sent = lines.flatMap((line) => {
      const { dir: way, msg } = line as { dir: string; msg?: { method?: string; params?: unknown } }
      return way === "out" && msg?.method === "session/set_config_option" ? [msg.params] : []
    })
    expect(sent).toEqual([expect.objectContaining({ configId: "collaboration_mode", value: "plan" })])
    const events = await replay(lines, name)
    const modes = events.flatMap((e) => (e.type === "mode.changed" ? [[e.payload.mode, e.payload.nativeMode]] : []))
    expect(modes).toEqual([
      ["plan", "plan"],
      ["default", "agent"]
    ])
    const asked = events.find((e) => e.type === "user-input.requested")
    expect(asked?.raw).toMatchObject({ source: "acp.request", method: "elicitation/create" })
    expect(
      asked?.type === "user-input.requested" &&
        asked.payload.prompt.questions.filter((q) => q.required).map((q) => q.id)
    ).toEqual(["db_choice", "test_scope"])
    const answered = events.find((e) => e.type === "user-input.resolved")
    expect(answered?.type === "user-input.resolved" && answered.payload).toMatchObject({
      resolution: "answered",
      answers: [
        { questionId: "db_choice", selectedOptionIds: ["SQLite"] },
        { questionId: "test_scope", selectedOptionIds: ["Unit only (Recommended)"] }
      ]
    })
    const proposed = events.flatMap((e) => (e.type === "plan.proposed.completed" ? [e] : []))
    expect(proposed).toHaveLength(2)
    for (const plan of proposed) expect(JSON.stringify(plan.raw?.payload)).toContain('"plan_update"')
    const reviews = events.flatMap((e) =>
      e.type === "request.opened" && e.payload.requestKind === "plan_approval" ? [e.payload] : []
    )
    expect(reviews.map((r) => [r.planId, r.options.map((o) => o.id)])).toEqual(
      proposed.map((p) => [p.payload.planId, ["implement_plan", "revise_plan"]])
    )
    const decisions = events.flatMap((e) => (e.type === "plan.decision" ? [e.payload.decision] : []))
    expect(decisions).toEqual(["rejected", "approved"])
    const chosen = events.flatMap((e) =>
      e.type === "request.resolved" && e.payload.optionId !== undefined ? [e.payload.optionId] : []
    )
    expect(chosen).toEqual(["revise_plan", "implement_plan"])
  })

  it("the claude-agent-acp 0.101.0 fixture: plan mode, AskUserQuestion answered, ExitPlanMode's own options, the approved plan_update", async () => {
    const name = "claude-agent-acp-0.101.0-plan-question-exitplan-options"
    const lines = readJsonl(join(fixtures, "acp", `${name}.jsonl`))
    expect((lines[0] as { agent: string }).agent).toBe("@agentclientprotocol/claude-agent-acp 0.101.0")
    const updates = lines.flatMap((line) => {
      const { msg } = line as { msg?: { method?: string; params?: { update?: { sessionUpdate?: string } } } }
      return msg?.method === "session/update" ? [msg.params?.update?.sessionUpdate] : []
    })
    expect(updates).toContain("plan_update")
    const events = await replay(lines, name)
    expect(events.find((e) => e.type === "mode.changed")?.payload).toMatchObject({ mode: "plan", nativeMode: "plan" })
    const asked = events.find((e) => e.type === "user-input.requested")
    expect(
      asked?.type === "user-input.requested" && asked.payload.prompt.questions[0]?.options.map((o) => o.id)
    ).toEqual(["PostgreSQL", "SQLite"])
    const answered = events.find((e) => e.type === "user-input.resolved")
    expect(answered?.type === "user-input.resolved" && answered.payload.answers[0]?.selectedOptionIds).toEqual([
      "SQLite"
    ])
    // The plan is proposed once: the plan_update after approval repeats it, it is no second proposal.
    const proposed = events.flatMap((e) => (e.type === "plan.proposed.completed" ? [e.payload] : []))
    expect(proposed.map((p) => p.markdown)).toEqual(["1. Inspect the workspace\n2. Create hi.txt"])
    const review = events.find((e) => e.type === "request.opened" && e.payload.requestKind === "plan_approval")
    const ids = review?.type === "request.opened" ? review.payload.options.map((o) => o.id) : []
    expect(ids).toEqual(expect.arrayContaining(["exit-plan-default", "exit-plan-auto", "reject"]))
    expect(ids.some((id) => id.startsWith("exit-plan-clear-"))).toBe(true)
    expect(review?.type === "request.opened" && review.payload.planId).toBe(proposed[0]?.planId)
    expect(events.find((e) => e.type === "plan.decision")?.payload).toMatchObject({ decision: "approved" })
    const chosen = events.flatMap((e) =>
      e.type === "request.resolved" && e.payload.optionId !== undefined ? [e.payload.optionId] : []
    )
    expect(chosen[0]).toBe("exit-plan-default")
    expect(events.filter((e) => e.type === "mode.changed").at(-1)?.payload).toMatchObject({ mode: "default" })
  })

  it("every turn records what the user sent as its user_message, as Codex and Claude do", async () => {
    for (const { dir, name } of transcripts) {
      const lines = readJsonl(join(fixtures, dir, `${name}.jsonl`))
      const sent = lines.flatMap((line) => {
        const { dir: way, msg } = line as { dir: string; msg?: { method?: string; params?: { prompt?: unknown } } }
        if (way !== "out" || msg?.method !== "session/prompt") return []
        const blocks = msg.params?.prompt as ReadonlyArray<{ type: string; text?: string }>
        return [blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n\n")]
      })
      const events = await replay(lines, name)
      const turns = events.filter((e) => e.type === "turn.started").map((e) => e.turnId)
      const users = events.flatMap((e) =>
        e.type === "item.completed" && e.payload.itemType === "user_message"
          ? [{ turnId: e.turnId, itemId: e.itemId, text: e.payload.text }]
          : []
      )
      expect(sent.length, name).toBeGreaterThan(0)
      expect(users, name).toEqual(turns.map((turnId, i) => ({ turnId, itemId: `${turnId}:user`, text: sent[i] })))
    }
  })

  it("the mapping is pure: every line of every fixture, stepped twice from one state, maps the same and leaves that state as it was", () => {
    for (const { dir, name } of transcripts) {
      const [meta, ...lines] = readJsonl(join(fixtures, dir, `${name}.jsonl`)) as [
        { provider: string; idPrefix: string },
        ...Array<TranscriptEntry>
      ]
      let state = initialAcpState(builtinAcpProfiles[meta.provider]!(), meta.idPrefix)
      let answered = 0
      for (const line of lines) {
        const before = snapshot(state)
        const first = step(state, line)
        const again = step(state, line)
        expect(JSON.stringify(again.drafts), `${name}: ${JSON.stringify(line)}`).toBe(JSON.stringify(first.drafts))
        expect(again.replies).toEqual(first.replies)
        expect(snapshot(state)).toBe(before)
        if (first.state.pending.size < state.pending.size) answered += 1
        state = first.state
      }
      // Answers and turn ends took requests out of the next state, never out of the one given.
      expect(answered, name).toBeGreaterThan(0)
    }
  })

  it("fails with a typed InvalidTranscript naming the line for a bad meta line, an unknown provider or a bad line", async () => {
    const failure = async (lines: ReadonlyArray<unknown>) => {
      const exit = await Effect.runPromise(
        Effect.exit(kernelReplay(acpReplayMapping, lines, { threadId: ThreadId.make("t") }))
      )
      if (Exit.isSuccess(exit)) throw new Error("expected an InvalidTranscript")
      const reason = exit.cause.reasons[0]
      if (reason?._tag !== "Fail") throw new Error(String(exit.cause))
      return reason.error
    }
    expect(await failure([])).toMatchObject({ _tag: "AdapterError", reason: { _tag: "InvalidTranscript", line: 0 } })
    expect(
      await failure([{ dir: "meta", provider: "gemini", agent: "x", startedAt: "2026-11-30T00:00:00.000Z" }])
    ).toMatchObject({ reason: { line: 0 }, message: expect.stringContaining("gemini") })
    const meta = { dir: "meta", provider: "cursor", agent: "x", startedAt: "2026-11-30T00:00:00.000Z" }
    expect(await failure([meta, { t: 1, dir: "sideways", msg: {} }])).toMatchObject({ reason: { line: 1 } })
    expect(await failure([meta, { t: 1, dir: "in", msg: "not an object" }])).toMatchObject({ reason: { line: 1 } })
  })
})
