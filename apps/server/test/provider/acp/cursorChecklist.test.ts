import { ThreadId, type RuntimeEvent } from "@planbridge/contracts"
import { Effect } from "effect"
import { resolve } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../../src/orchestration/RuntimeIngestion.ts"
import { Database } from "../../../src/persistence/Database.ts"
import { readThreadSnapshot } from "../../../src/persistence/ThreadSnapshots.ts"
import { makeAcpAdapter } from "../../../src/provider/acp/AcpAdapter.ts"
import type { AcpProfile } from "../../../src/provider/acp/AcpProfile.ts"
import { codexAcpProfile } from "../../../src/provider/acp/profiles/codexAcp.ts"
import { cursorProfile } from "../../../src/provider/acp/profiles/cursor.ts"
import { runWithIngestion, tempDir } from "../../support/ingestionRuntime.ts"
import { openSession, recording, replayOfLive, run } from "./harness.ts"
import { makeStepper } from "./stepper.ts"

/**
 * Issue 10, finding 4: real Cursor sends its checklist twice, as `cursor/update_todos` (ids,
 * merge semantics) and as ACP `plan` updates mirroring the same list (no ids, `priority`).
 * For the Cursor profile the todo list is authoritative once the session has seen one.
 */
const root = resolve(import.meta.dirname, "../../../../..")
const profile = cursorProfile({
  command: resolve(root, "node_modules/.bin/tsx"),
  args: [resolve(import.meta.dirname, "scriptedCursorAgent.ts")]
})
const env = { PATH: process.env.PATH, HOME: process.env.HOME, CURSOR_API_KEY: "test-key" }

const cleanups: Array<() => void> = []
afterEach(() => cleanups.splice(0).forEach((f) => f()))

/** Runs one scripted turn in a fresh recorded session; returns its events and the replay. */
const scriptedTurn = async (scenario: string, threadId: ThreadId) => {
  const { recorder, options } = recording("cursor", threadId)
  const adapter = makeAcpAdapter(profile, { env, ...options })
  const open = await openSession(adapter, { threadId, cwd: root, mode: "default" })
  try {
    const turnId = await run(open.session.startTurn({ text: `SCENARIO:${scenario}` }))
    const completed = await open.log.waitFor("turn.completed", (e) => e.turnId === turnId)
    expect(completed.payload.status).toBe("completed")
    return { turnId, log: open.log, close: open.close, recorder }
  } catch (error) {
    await open.close()
    throw error
  }
}

/** Persists the events as the server would and reads the thread snapshot back. */
const persistedSnapshot = (events: ReadonlyArray<RuntimeEvent>, threadId: ThreadId) => {
  const t = tempDir("cursor-checklist")
  cleanups.push(t.cleanup)
  return runWithIngestion(
    `${t.dir}/planbridge.db`,
    Effect.gen(function* () {
      const ingestion = yield* RuntimeIngestion
      const { db } = yield* Database
      yield* ingestion.ingestAll(events)
      return readThreadSnapshot(db, threadId)
    })
  )
}

const stepsOf = (events: ReadonlyArray<RuntimeEvent>) =>
  events.flatMap((e) => (e.type === "turn.plan.updated" ? [e.payload.plan.steps] : []))

describe("Cursor checklist: cursor/update_todos is authoritative over mirrored ACP plan updates", () => {
  it("two update_todos and three plan mirrors yield exactly two snapshots with ids; revision 2 persisted", async () => {
    const threadId = ThreadId.make("thread-cursor-checklist")
    const { turnId, log, close, recorder } = await scriptedTurn("CHECKLIST", threadId)
    await close()
    // The mirrors did reach the client: they are in the recorded wire traffic.
    const mirrors = recorder.lines().filter((l) => JSON.stringify(l).includes('"sessionUpdate":"plan"'))
    expect(mirrors).toHaveLength(3)

    const snapshots = stepsOf(log.events)
    expect(snapshots.map((steps) => steps.map((s) => [s.id, s.step, s.status]))).toEqual([
      [
        ["t1", "Inspect the workspace", "inProgress"],
        ["t2", "Create hello.txt", "pending"],
        ["t3", "Report back", "pending"]
      ],
      [
        ["t1", "Inspect the workspace", "completed"],
        ["t2", "Create hello.txt", "inProgress"],
        ["t3", "Report back", "pending"]
      ]
    ])
    expect(snapshots.flat().some((s) => s.priority !== undefined)).toBe(false)
    expect(log.ofType("capabilities.changed")).toHaveLength(1)

    const snapshot = await persistedSnapshot(log.events, threadId)
    expect(snapshot?.latestPlan).toMatchObject({ turnId, revision: 2 })
    expect(snapshot?.latestPlan?.plan.steps.map((s) => s.id)).toEqual(["t1", "t2", "t3"])
    expect(snapshot?.planRevisions).toEqual({ [turnId]: 2 })

    const { live, replayed } = await replayOfLive(recorder, log, threadId)
    expect(replayed).toEqual(live)
  })

  it("a Cursor session that never sent update_todos takes its checklist from plan updates", async () => {
    const threadId = ThreadId.make("thread-cursor-plan-only")
    const { log, close } = await scriptedTurn("PLAN_ONLY", threadId)
    await close()
    expect(stepsOf(log.events).map((steps) => steps.map((s) => [s.id, s.status, s.priority]))).toEqual([
      [
        [undefined, "inProgress", "medium"],
        [undefined, "pending", "medium"],
        [undefined, "pending", "medium"]
      ],
      [
        [undefined, "completed", "medium"],
        [undefined, "completed", "medium"],
        [undefined, "pending", "medium"]
      ]
    ])
    expect(log.ofType("capabilities.changed")).toHaveLength(1)
  })
})

describe("checklist authority is profile data, not a provider name check", () => {
  const init = { protocolVersion: 1, agentInfo: { name: "x", version: "1" } }
  const plan = {
    sessionId: "s1",
    update: { sessionUpdate: "plan", entries: [{ content: "Do it", priority: "high", status: "pending" }] }
  }
  const todos = { toolCallId: "todos-1", merge: false, todos: [{ id: "a", content: "Do it", status: "pending" }] }

  /** plan, todos (request), plan, todos (notification), plan: which ones became snapshots? */
  const sources = (p: AcpProfile) => {
    const t = makeStepper(p)
    t.configure(init, { sessionId: "s1" }, { cwd: "/w", resumed: false })
    t.startTurn()
    const drafts = [
      ...t.notification("session/update", plan).drafts,
      ...t.request(1, "cursor/update_todos", todos).drafts,
      ...t.notification("session/update", plan).drafts,
      ...t.notification("cursor/update_todos", todos).drafts,
      ...t.notification("session/update", plan).drafts
    ]
    return drafts.flatMap((d) =>
      d.type === "turn.plan.updated" ? [d.raw?.method] : d.type === "runtime.warning" ? ["warning"] : []
    )
  }

  it("Cursor: plan updates count until the first todo list, then only todo lists do", () => {
    expect(cursorProfile().checklistAuthority).toBe("todos")
    expect(sources(cursorProfile())).toEqual(["session/update", "cursor/update_todos", "cursor/update_todos"])
  })

  it("a profile declaring plan updates authoritative publishes every plan update, whatever its provider", () => {
    expect(sources({ ...cursorProfile(), checklistAuthority: "plan" })).toEqual([
      "session/update",
      "cursor/update_todos",
      "session/update",
      "cursor/update_todos",
      "session/update"
    ])
  })

  it("generic ACP profiles (codex-acp, claude-agent-acp) keep every plan update", () => {
    expect(codexAcpProfile().checklistAuthority).toBe("plan")
    // codex-acp knows no cursor/update_todos: the request is refused, the notification reported.
    expect(sources(codexAcpProfile())).toEqual([
      "session/update",
      "warning",
      "session/update",
      "warning",
      "session/update"
    ])
  })
})
