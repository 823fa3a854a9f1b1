import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { Database } from "../../src/persistence/Database.ts"
import { ProjectionRebuild } from "../../src/persistence/ProjectionRebuild.ts"
import { dumpProjections, type ProjectionDump } from "../../src/persistence/SqliteProjectionRebuild.ts"
import { prng } from "../support/eventMix.ts"
import { runWithIngestion, tempDir } from "../support/ingestionRuntime.ts"

const cleanups: Array<() => void> = []
afterEach(() => cleanups.splice(0).forEach((f) => f()))
const dbFile = () => {
  const t = tempDir("coalesce")
  cleanups.push(t.cleanup)
  return `${t.dir}/planbridge.db`
}

/**
 * Events that touch the same few rows in every order, including orders no adapter produces
 * (a completion before its start, deltas for an item never announced, state changes around an
 * exit), so that each fold the projector does per batch meets every case.
 */
const scrambled = (seed: number, count: number): Array<Record<string, unknown>> => {
  const r = prng(seed)
  let clock = Date.UTC(2026, 5, 1, 8, 0, 0)
  const out: Array<Record<string, unknown>> = []
  for (let n = 0; n < count; n++) {
    const thread = `t${r.int(2)}`
    const turnId = `${thread}-turn${r.int(3)}`
    const itemId = `${turnId}-item${r.int(2)}`
    const planId = `${turnId}-plan`
    clock += 1 + r.int(5)
    const base = {
      eventId: `c${seed}-${n}`,
      provider: "codex",
      threadId: thread,
      createdAt: new Date(clock).toISOString()
    }
    const pick = r.int(14)
    const itemType = r.pick(["assistant_message", "reasoning", "tool_call"])
    const status = r.pick(["inProgress", "completed", "failed"])
    const itemFields = () => ({
      itemType,
      status,
      ...(r.next() < 0.5 ? { text: `full${n}` } : {}),
      ...(r.next() < 0.3 ? { title: `title${n}` } : {}),
      ...(r.next() < 0.3 ? { toolName: "Bash", data: { n } } : {})
    })
    const events: Array<Record<string, unknown>> = [
      { ...base, turnId, type: "turn.started", payload: r.next() < 0.5 ? { mode: r.pick(["plan", "default"]) } : {} },
      {
        ...base,
        turnId,
        type: "turn.completed",
        payload: {
          status: r.pick(["completed", "failed"]),
          ...(r.next() < 0.5 ? { usage: { inputTokens: n, outputTokens: 1 } } : {})
        }
      },
      { ...base, turnId, itemId, type: "item.started", payload: itemFields() },
      { ...base, turnId, itemId, type: "item.updated", payload: itemFields() },
      { ...base, turnId, itemId, type: "item.completed", payload: itemFields() },
      {
        ...base,
        turnId,
        itemId,
        type: "content.delta",
        payload: { streamKind: r.pick(["assistant_text", "reasoning_text", "tool_output"]), delta: `d${n} ` }
      },
      { ...base, turnId, itemId, type: "content.delta", payload: { streamKind: "assistant_text", delta: `e${n} ` } },
      {
        ...base,
        type: "session.state.changed",
        payload: { state: r.pick(["running", "idle", "waiting"]), flags: r.next() < 0.5 ? [] : [`f${n}`] }
      },
      { ...base, type: "session.exited", payload: { exitKind: "graceful", exitCode: 0, signal: null } },
      { ...base, type: "session.started", payload: { resumed: true, cwd: `/w${n}` } },
      {
        ...base,
        turnId,
        type: "turn.plan.updated",
        payload: { plan: { explanation: null, steps: [{ step: `s${n}`, status: "pending" }], source: "native" } }
      },
      { ...base, turnId, type: "plan.proposed.delta", payload: { planId, delta: `p${n}\n` } },
      { ...base, turnId, type: "plan.proposed.completed", payload: { planId, markdown: `# plan ${n}` } },
      { ...base, turnId, type: "plan.decision", payload: { planId, decision: r.pick(["approved", "rejected"]) } }
    ]
    out.push(events[pick]!)
  }
  return out
}

/** Ingests the events in batches of the given sizes (cycled) into a fresh database; returns its projections. */
const projectIn = (events: ReadonlyArray<unknown>, sizes: ReadonlyArray<number>) =>
  runWithIngestion(
    dbFile(),
    Effect.gen(function* () {
      const ingestion = yield* RuntimeIngestion
      let i = 0
      let k = 0
      while (i < events.length) {
        const size = sizes[k++ % sizes.length]!
        yield* ingestion.ingestAll(events.slice(i, i + size))
        i += size
      }
      const { db } = yield* Database
      const dump: ProjectionDump = dumpProjections(db)
      expect((yield* (yield* ProjectionRebuild).rebuild({ dryRun: true })).differences).toEqual([])
      return dump
    })
  )

describe("per-batch folding of projection writes", () => {
  it("leaves the same rows as applying every event in a transaction of its own, whatever the batch boundaries", async () => {
    for (const seed of [1, 2, 3]) {
      const events = scrambled(seed, 400)
      const oneByOne = await projectIn(events, [1])
      expect(await projectIn(events, [events.length])).toEqual(oneByOne)
      expect(await projectIn(events, [3, 17, 1, 64, 5])).toEqual(oneByOne)
    }
  })

  it("folds an item, a turn and the thread state within one batch as the events say", async () => {
    const at = (s: number) => new Date(Date.UTC(2026, 5, 1, 9, 0, s)).toISOString()
    const base = (n: number) => ({ eventId: `f-${n}`, provider: "claude", threadId: "thr-f", createdAt: at(n) })
    const turn = { turnId: "turn-1" }
    const events = [
      // Text streamed for an item nobody announced, then the item, then more text.
      {
        ...base(1),
        ...turn,
        itemId: "i1",
        type: "content.delta",
        payload: { streamKind: "reasoning_text", delta: "a" }
      },
      {
        ...base(2),
        ...turn,
        itemId: "i1",
        type: "item.started",
        payload: { itemType: "reasoning", status: "inProgress" }
      },
      {
        ...base(3),
        ...turn,
        itemId: "i1",
        type: "content.delta",
        payload: { streamKind: "reasoning_text", delta: "b" }
      },
      {
        ...base(4),
        ...turn,
        itemId: "i1",
        type: "item.updated",
        payload: { itemType: "reasoning", status: "inProgress", text: "AB" }
      },
      {
        ...base(5),
        ...turn,
        itemId: "i1",
        type: "content.delta",
        payload: { streamKind: "reasoning_text", delta: "c" }
      },
      {
        ...base(6),
        ...turn,
        itemId: "i1",
        type: "item.completed",
        payload: { itemType: "reasoning", status: "completed" }
      },
      // A completion seen before its start: the start only contributes the mode.
      { ...base(7), ...turn, type: "turn.completed", payload: { status: "failed", durationMs: 5 } },
      { ...base(8), ...turn, type: "turn.started", payload: { mode: "plan" } },
      // A state change before an exit is overridden by it; one after it wins.
      { ...base(9), type: "session.state.changed", payload: { state: "running", flags: ["x"] } },
      { ...base(10), type: "session.exited", payload: { exitKind: "crashed", exitCode: 1, signal: null } },
      { ...base(11), type: "session.state.changed", payload: { state: "error", flags: [] } }
    ]
    const dump = await projectIn(events, [events.length])
    expect(dump.items).toEqual([
      expect.objectContaining({
        itemId: "i1",
        itemType: "reasoning",
        status: "completed",
        text: "ABc",
        startedAt: at(1),
        updatedAt: at(6),
        completedAt: at(6)
      })
    ])
    expect(dump.turns).toEqual([
      expect.objectContaining({
        turnId: "turn-1",
        status: "failed",
        mode: "plan",
        durationMs: 5,
        startedAt: at(7),
        completedAt: at(7)
      })
    ])
    expect(dump.threads).toEqual([
      expect.objectContaining({ state: "error", flags: "[]", lastSeq: 11, updatedAt: at(11) })
    ])
    expect(JSON.parse(String(dump.threads![0]!.exit))).toMatchObject({ exitKind: "crashed" })
    expect(await projectIn(events, [1])).toEqual(dump)
  })
})
