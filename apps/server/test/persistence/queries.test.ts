import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { Database } from "../../src/persistence/Database.ts"
import { OperatorQueries } from "../../src/persistence/OperatorQueries.ts"
import { decodePersistedEvent, parsePersistedEvent, persistedEventJson } from "../../src/persistence/PersistedEvent.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { runWithIngestion, tempDir } from "../support/ingestionRuntime.ts"
import { ENGINES, freshStore } from "../support/storeEngines.ts"

const cleanups: Array<() => void> = []
afterEach(() => cleanups.splice(0).forEach((f) => f()))
const newDir = () => {
  const t = tempDir("queries")
  cleanups.push(t.cleanup)
  return t.dir
}

const base = { provider: "claude", threadId: "thr-q", createdAt: "2026-11-30T10:00:00.000Z" }

describe.each(ENGINES)("operator queries on %s", (engine) => {
  it("filters prompts by status, provider, thread and age, and reports the plan history of a turn", async () => {
    const store = await freshStore(engine)
    await store.run(
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        yield* ingestion.ingestAll(generateEventMix({ seed: 41, count: 1500, threads: 3 }))
        const steps = (n: number) => Array.from({ length: n }, (_, i) => ({ step: `s${i}`, status: "pending" }))
        for (const [i, n] of [1, 2, 3].entries()) {
          yield* ingestion.ingest({
            ...base,
            eventId: `plan-${i}`,
            turnId: "turn-x",
            type: "turn.plan.updated",
            payload: { plan: { explanation: null, steps: steps(n), source: "tool-derived" } }
          })
        }
        const queries = yield* OperatorQueries
        const pending = yield* queries.listPrompts({ status: "pending" })
        const resolved = yield* queries.listPrompts({ status: "resolved" })
        expect(pending.length).toBeGreaterThan(0)
        expect(pending.every((p) => p.status === "pending" && p.resolution === null)).toBe(true)
        expect(resolved.every((p) => p.status === "resolved" && p.resolution !== null)).toBe(true)
        const codex = yield* queries.listPrompts({ provider: "codex" })
        expect(codex.length).toBeGreaterThan(0)
        expect(codex.every((p) => p.provider === "codex")).toBe(true)
        const thread = pending[0]!.threadId
        expect((yield* queries.listPrompts({ threadId: thread })).every((p) => p.threadId === thread)).toBe(true)
        // Generated events are dated 2026-01-01: older than an hour ago, but not older than 100 years.
        expect((yield* queries.listPrompts({ olderThanMs: 3_600_000 })).length).toBe(pending.length + resolved.length)
        expect(yield* queries.listPrompts({ olderThanMs: 100 * 365 * 86_400_000 })).toEqual([])
        const history = yield* queries.planHistory("thr-q", "turn-x")
        expect(history.map((h) => [h.revision, h.isLatest, h.plan.steps.length])).toEqual([
          [1, false, 1],
          [2, false, 2],
          [3, true, 3]
        ])
        const missing = yield* Effect.flip(queries.getPrompt("nope"))
        expect(missing.reason._tag).toBe("PromptNotFound")
        const detail = yield* queries.getPrompt(pending[0]!.promptId)
        expect(detail.request?.nativeMethod).toBe("item/tool/requestUserInput")
        expect(detail.timeline[0]?.event.type).toBe("request.opened")
      })
    )
  })
})

describe("persisted rows", () => {
  it("decodes rows written in the older (version 0) shape", () => {
    const old = {
      type: "user-input.requested",
      eventId: "old-1",
      ...base,
      payload: {
        prompt: {
          promptId: "p-old",
          source: "native",
          questions: [{ id: "q", label: "Which?", options: [{ id: "o", label: "A" }] }]
        }
      }
    }
    const event = decodePersistedEvent({ seq: 1, schemaVersion: 0, event: JSON.stringify(old), raw: null })
    expect(event.type === "user-input.requested" && event.payload.prompt).toMatchObject({
      blocking: true,
      questions: [{ secret: false, multiSelect: false }]
    })
    const state = decodePersistedEvent({
      seq: 2,
      schemaVersion: 0,
      event: JSON.stringify({ ...base, eventId: "old-2", type: "session.state.changed", payload: { state: "idle" } }),
      raw: null
    })
    expect(state.type === "session.state.changed" && state.payload.flags).toEqual([])
  })

  it("names the row of an undecodable event", () => {
    expect(() => decodePersistedEvent({ seq: 7, schemaVersion: 1, event: "{not json", raw: null })).toThrow(/event #7/)
    expect(() => parsePersistedEvent({ seq: 8, schemaVersion: 1, event: "{not json", raw: null })).toThrow(/event #8/)
    expect(() => persistedEventJson({ seq: 6, schemaVersion: 1, event: "{not json", raw: null })).toThrow(/event #6/)
  })

  it("the backlog's parse gives what a decode gives, lifting older rows the same way", () => {
    const raw = { source: "codex", method: "item/agentMessage/delta", payload: { delta: "hi" } }
    const rows = generateEventMix({ seed: 5, count: 300 }).map((event, i) => {
      const { raw: _raw, ...canonical } = event
      return {
        seq: i + 1,
        schemaVersion: 1,
        event: JSON.stringify(canonical),
        raw: i % 2 === 0 ? JSON.stringify(raw) : null
      }
    })
    for (const row of rows) expect(parsePersistedEvent(row)).toEqual(decodePersistedEvent(row))
    // The backlog's text (sent without parsing) is that event too, `raw` included.
    for (const row of rows) expect(JSON.parse(persistedEventJson(row))).toEqual(decodePersistedEvent(row))
    const old = {
      seq: 9,
      schemaVersion: 0,
      event: JSON.stringify({ ...base, eventId: "old-3", type: "session.state.changed", payload: { state: "idle" } }),
      raw: null
    }
    const lifted = parsePersistedEvent(old)
    expect(lifted.type === "session.state.changed" && lifted.payload.flags).toEqual([])
    expect(JSON.parse(persistedEventJson(old))).toEqual(lifted)
  })
})

describe("planbridge rebuild (CLI)", () => {
  it("reports identical projections, then repairs a tampered one with exit code 3", async () => {
    const dir = newDir()
    await runWithIngestion(
      `${dir}/planbridge.db`,
      Effect.gen(function* () {
        yield* (yield* RuntimeIngestion).ingestAll(generateEventMix({ seed: 43, count: 800 }))
      })
    )
    const bin = fileURLToPath(new URL("../../bin/planbridge.mjs", import.meta.url))
    const rebuild = (...args: Array<string>) => {
      try {
        return {
          code: 0,
          out: execFileSync(process.execPath, [bin, "rebuild", "--data-dir", dir, ...args], { encoding: "utf8" })
        }
      } catch (error) {
        const e = error as { status: number; stdout: string }
        return { code: e.status, out: e.stdout }
      }
    }
    expect(rebuild()).toEqual({ code: 0, out: "rebuilt projections from 800 events: identical\n" })
    await runWithIngestion(
      `${dir}/planbridge.db`,
      Effect.gen(function* () {
        const { sqlite } = yield* Database
        sqlite.prepare("update turns set status = 'bogus'").run()
      })
    )
    const repaired = rebuild()
    expect(repaired.code).toBe(3)
    expect(repaired.out).toMatch(/turns: \d+ rows before, \d+ after, \d+ differing/)
    expect(rebuild().code).toBe(0)
  })
})
