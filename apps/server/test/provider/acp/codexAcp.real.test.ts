import { OptionId, QuestionId, ThreadId } from "@planbridge/contracts"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAcpAdapter } from "../../../src/provider/acp/AcpAdapter.ts"
import { codexAcpProfile } from "../../../src/provider/acp/profiles/codexAcp.ts"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import {
  functionCallOutputs,
  startMockResponsesModel,
  type MockResponsesModel
} from "../../support/mockResponsesModel.ts"
import { askTwoQuestions, PLAN_MARKDOWN, planReply } from "../codex/realPeerSupport.ts"
import { adapterFailure, openSession, recording, replayOfLive, run, type OpenSession } from "./harness.ts"
import { writeCodexHome } from "./peers.ts"

const root = resolve(import.meta.dirname, "../../../../..")
const threadId = ThreadId.make("thread-codex-acp")
const { recorder, options } = recording("acp-codex", threadId)

/** Pids of live processes whose environment names this CODEX_HOME (the wrapper and its binary). */
const processesWithHome = (home: string): ReadonlyArray<number> =>
  readdirSync("/proc").flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return []
    try {
      return readFileSync(`/proc/${entry}/environ`, "utf8").split("\0").includes(`CODEX_HOME=${home}`)
        ? [Number(entry)]
        : []
    } catch {
      return []
    }
  })

const plan = (statuses: ReadonlyArray<string>) => ({
  plan: [
    { step: "Inspect the workspace", status: statuses[0] },
    { step: "Create hello.txt", status: statuses[1] },
    { step: "Report back", status: statuses[2] }
  ]
})

describe("ACP client against the real @agentclientprotocol/codex-acp 2.6.0 (scripted Responses model on loopback)", () => {
  let model: MockResponsesModel
  let home: string
  let work: string
  let open: OpenSession

  beforeAll(async () => {
    assertLoopbackOnly()
    model = await startMockResponsesModel()
    home = mkdtempSync(join(tmpdir(), "planbridge-codex-acp-"))
    work = join(home, "work")
    mkdirSync(work)
    writeCodexHome(home, model.baseUrl)
    const adapter = makeAcpAdapter(codexAcpProfile({ command: resolve(root, "node_modules/.bin/codex-acp") }), {
      env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: home, MOCK_KEY: "mock-key" },
      ...options
    })
    open = await openSession(adapter, { threadId, cwd: work, mode: "default" })
  })
  afterAll(async () => {
    await open?.close()
    await model?.close()
    if (home !== undefined) rmSync(home, { recursive: true, force: true })
  })

  it("starts in its own default preset, and reads plan mode from the collaboration_mode config option", async () => {
    const { log, session } = open
    const configured = log.ofType("session.configured")[0]
    // `agent` (auto review) is its default preset: canonical default, so session.start with
    // mode default switches nothing (it used to move the agent to read-only).
    expect(configured?.payload).toMatchObject({ mode: "default", nativeMode: "agent", model: "gpt-5.4" })
    expect(log.ofType("mode.changed")).toEqual([])
    expect(configured?.payload.capabilities).toMatchObject({
      supportsPlanMode: true,
      supportsExitPlanMode: true,
      supportsPlanOptions: true,
      supportsStructuredUserInput: true,
      supportsAskMode: false,
      supportsModeSwitching: true,
      supportsStructuredPlanUpdates: false
    })
    await run(session.setMode("plan"))
    expect((await log.waitFor("mode.changed", (e) => e.payload.mode === "plan")).payload.nativeMode).toBe("plan")
    expect(await run(session.mode)).toBe("plan")
    // Out of plan mode into execute: the option off, then the full-access preset.
    await run(session.setMode("execute"))
    expect((await log.waitFor("mode.changed", (e) => e.payload.mode === "execute")).payload.nativeMode).toBe(
      "agent-full-access"
    )
    await run(session.setMode("default"))
    expect((await log.waitFor("mode.changed", (e) => e.payload.nativeMode === "agent")).payload.mode).toBe("default")
  })

  it("plan mode: the question as an elicitation answered from the client, the plan, revise_plan then implement_plan", async () => {
    const { log, session } = open
    const from = log.events.length
    await run(session.setMode("plan"))
    model.script({ output: [askTwoQuestions] }, { output: [planReply] })
    const turnId = await run(session.startTurn({ text: "plan the service" }))
    const asked = await log.waitFor("user-input.requested", () => true, { from, ms: 30_000 })
    const prompt = asked.payload.prompt
    expect(prompt.questions.filter((q) => q.required).map((q) => [q.id, q.options.map((o) => o.id)])).toEqual([
      ["db_choice", ["PostgreSQL (Recommended)", "SQLite", "None of the above"]],
      ["test_scope", ["Unit only (Recommended)", "Unit + integration", "None of the above"]]
    ])
    await run(
      session.respondToUserInput({
        promptId: prompt.promptId,
        answers: [
          { questionId: QuestionId.make("db_choice"), selectedOptionIds: [OptionId.make("SQLite")] },
          { questionId: QuestionId.make("test_scope"), selectedOptionIds: [OptionId.make("Unit only (Recommended)")] }
        ]
      })
    )
    const review = await log.waitFor("request.opened", (e) => e.payload.requestKind === "plan_approval", {
      from,
      ms: 30_000
    })
    // The answers reached the model as given.
    const answered = model.responseRequests().flatMap((r) => functionCallOutputs(r))
    expect(JSON.stringify(answered)).toContain("SQLite")
    const proposed = log.events.slice(from).filter((e) => e.type === "plan.proposed.completed")
    expect(proposed).toHaveLength(1)
    // The plan as codex-acp sends it to a client that announces `plan`: a plan_update.
    expect(proposed[0]?.raw).toMatchObject({ source: "acp.notification", method: "session/update" })
    expect(JSON.stringify(proposed[0]?.raw?.payload)).toContain('"plan_update"')
    expect(proposed[0]).toMatchObject({ turnId, payload: { markdown: PLAN_MARKDOWN, planId: review.payload.planId } })
    expect(review.payload.options.map((o) => [o.id, o.kind])).toEqual([
      ["implement_plan", "allow_once"],
      ["revise_plan", "reject_once"]
    ])
    const planId = review.payload.planId!
    // An option that says the opposite of the decision is refused before anything is sent.
    const mismatched = await adapterFailure(
      session.decidePlan({ planId, decision: "approved", optionId: OptionId.make("revise_plan") })
    )
    expect(mismatched.kind).toBe("invalid_answer")
    await run(session.decidePlan({ planId, decision: "rejected", optionId: OptionId.make("revise_plan") }))
    await log.waitFor("turn.completed", (e) => e.turnId === turnId, { ms: 30_000 })
    const turnEvents = log.events.slice(from)
    expect(turnEvents.find((e) => e.type === "plan.decision")?.payload).toMatchObject({ planId, decision: "rejected" })
    expect(
      turnEvents.find((e) => e.type === "request.resolved" && e.payload.optionId !== undefined)?.payload
    ).toMatchObject({
      optionId: "revise_plan"
    })
    expect(await run(session.mode)).toBe("plan")

    // The next plan is implemented: codex-acp leaves plan mode and implements it in the same turn.
    const next = log.events.length
    model.script({ output: [planReply] }, { output: [{ type: "text", text: "Implementing the plan now." }] })
    const second = await run(session.startTurn({ text: "plan it again" }))
    const again = await log.waitFor("request.opened", (e) => e.payload.requestKind === "plan_approval", {
      from: next,
      ms: 30_000
    })
    await run(
      session.decidePlan({
        planId: again.payload.planId!,
        decision: "approved",
        optionId: OptionId.make("implement_plan")
      })
    )
    await log.waitFor("turn.completed", (e) => e.turnId === second, { ms: 30_000 })
    expect(
      (await log.waitFor("mode.changed", (e) => e.payload.mode === "default", { from: next })).payload.nativeMode
    ).toBe("agent")
    expect(log.assistantText(second)).toContain("Implementing the plan now.")
  })

  it("turns update_plan into plan snapshots in its default preset", async () => {
    const { log, session } = open
    const from = log.events.length
    model.script(
      {
        output: [
          { type: "text", text: "Planning first." },
          {
            type: "function_call",
            name: "update_plan",
            arguments: plan(["completed", "in_progress", "pending"]),
            callId: "call_plan_1"
          }
        ]
      },
      {
        output: [
          {
            type: "function_call",
            name: "update_plan",
            arguments: plan(["completed", "completed", "completed"]),
            callId: "call_plan_2"
          }
        ]
      },
      { output: [{ type: "text", text: "Done." }] }
    )
    const turnId = await run(session.startTurn({ text: "work through the checklist" }))
    const completed = await log.waitFor("turn.completed", (e) => e.turnId === turnId, { ms: 30_000 })
    expect(completed.payload.status).toBe("completed")
    const turnEvents = log.events.slice(from)
    const snapshots = turnEvents.flatMap((e) => (e.type === "turn.plan.updated" ? [e.payload.plan] : []))
    expect(snapshots.length).toBeGreaterThanOrEqual(2)
    expect(snapshots[0]?.steps).toEqual([
      { step: "Inspect the workspace", status: "completed", priority: "medium" },
      { step: "Create hello.txt", status: "inProgress", priority: "medium" },
      { step: "Report back", status: "pending", priority: "medium" }
    ])
    expect(snapshots.at(-1)?.steps.map((s) => s.status)).toEqual(["completed", "completed", "completed"])
    expect(turnEvents.filter((e) => e.type === "capabilities.changed")).toHaveLength(1)
    expect(log.assistantText(turnId)).toContain("Done.")
  })

  it("cancels a turn whose plan review is pending: the client answers cancelled, the turn is interrupted", async () => {
    const { log, session } = open
    const from = log.events.length
    await run(session.setMode("plan"))
    model.script({ output: [planReply] })
    const turnId = await run(session.startTurn({ text: "plan once more" }))
    const opened = await log.waitFor("request.opened", (e) => e.payload.requestKind === "plan_approval", { from })
    await run(session.interrupt())
    const completed = await log.waitFor("turn.completed", (e) => e.turnId === turnId, { ms: 30_000 })
    expect(completed.payload.status).toBe("interrupted")
    expect(log.events.slice(from).find((e) => e.type === "request.resolved")?.payload).toMatchObject({
      requestId: opened.payload.requestId,
      resolution: "cancelled"
    })
    expect(await run(session.mode)).toBe("plan")
  })

  it("closing the session kills the wrapper and the codex app-server it started", async () => {
    expect(processesWithHome(home).length).toBeGreaterThanOrEqual(2)
    await open.close()
    expect(open.log.ofType("session.exited")[0]?.payload.exitKind).toBe("killed")
    expect(processesWithHome(home)).toEqual([])
  })

  it("replaying the recorded transcript reproduces every live event (ids and times aside)", async () => {
    await open.close()
    const { live, replayed } = await replayOfLive(recorder, open.log, threadId)
    expect(replayed).toEqual(live)
    // The session is given the server's emitAll: bursts of the agent's output went in one record each.
    expect(Math.max(...open.log.batches)).toBeGreaterThan(1)
  })
})
