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
    const name = transcripts.find((t) => t.name.startsWith("claude-agent-acp"))!.name
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

  it("fails with a typed ReplayError naming the line for a bad meta line, an unknown provider or a bad line", async () => {
    const failure = async (lines: ReadonlyArray<unknown>) => {
      const exit = await Effect.runPromise(
        Effect.exit(kernelReplay(acpReplayMapping, lines, { threadId: ThreadId.make("t") }))
      )
      if (Exit.isSuccess(exit)) throw new Error("expected a ReplayError")
      const reason = exit.cause.reasons[0]
      if (reason?._tag !== "Fail") throw new Error(String(exit.cause))
      return reason.error
    }
    expect(await failure([])).toMatchObject({ _tag: "ReplayError", line: 0 })
    expect(
      await failure([{ dir: "meta", provider: "gemini", agent: "x", startedAt: "2026-11-30T00:00:00.000Z" }])
    ).toMatchObject({ line: 0, message: expect.stringContaining("gemini") })
    const meta = { dir: "meta", provider: "cursor", agent: "x", startedAt: "2026-11-30T00:00:00.000Z" }
    expect(await failure([meta, { t: 1, dir: "sideways", msg: {} }])).toMatchObject({ line: 1 })
    expect(await failure([meta, { t: 1, dir: "in", msg: "not an object" }])).toMatchObject({ line: 1 })
  })
})
