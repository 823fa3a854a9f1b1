import { OptionId, QuestionId, ThreadId } from "@planbridge/contracts"
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { makeAcpAdapter } from "../../../src/provider/acp/AcpAdapter.ts"
import { claudeAcpProfile } from "../../../src/provider/acp/profiles/claudeAcp.ts"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import {
  lastToolResults,
  lastUserText,
  startMockMessagesModel,
  toolResultText,
  type MockMessagesModel,
  type ScriptedResponse
} from "../../support/mockMessagesModel.ts"
import { planFilePath } from "../claude/greetingPlan.ts"
import { adapterFailure, openSession, recording, replayOfLive, run, type OpenSession } from "./harness.ts"
import { claudeEnv } from "./peers.ts"

const root = resolve(import.meta.dirname, "../../../../..")
const threadId = ThreadId.make("thread-claude-acp")
const { recorder, options } = recording("acp-claude", threadId)

const PLAN = "1. Inspect the workspace\n2. Create hi.txt\n3. Report back"
const DB_QUESTION = "Which database should the service use?"

/** The plan written to the plan file the CLI names, then ExitPlanMode (the CLI fills in the plan). */
const proposePlan = (plan: string): ReadonlyArray<ScriptedResponse> => [
  (body) => ({
    blocks: [{ type: "tool_use", name: "Write", input: { file_path: planFilePath(body), content: plan } }]
  }),
  { blocks: [{ type: "tool_use", name: "ExitPlanMode", input: {} }] }
]

describe("ACP client against the real @agentclientprotocol/claude-agent-acp 0.101.0 (scripted Messages model on loopback)", () => {
  let model: MockMessagesModel
  let home: string
  let work: string
  let open: OpenSession
  const command = resolve(root, "node_modules/.bin/claude-agent-acp")

  beforeAll(async () => {
    assertLoopbackOnly()
    model = await startMockMessagesModel()
    home = mkdtempSync(join(tmpdir(), "planbridge-claude-acp-"))
    work = join(home, "work")
    mkdirSync(work)
    const adapter = makeAcpAdapter(claudeAcpProfile({ command }), { env: claudeEnv(home, model.baseUrl), ...options })
    open = await openSession(adapter, { threadId, cwd: work, mode: "plan" })
  })
  afterAll(async () => {
    await open?.close()
    await model?.close()
    if (home !== undefined) rmSync(home, { recursive: true, force: true })
  })

  it("starts in plan mode, and says its questions arrive as question cards", async () => {
    const { log, session } = open
    const configured = log.ofType("session.configured")[0]
    expect(configured?.payload).toMatchObject({ mode: "default", nativeMode: "default" })
    expect(configured?.payload.capabilities).toMatchObject({
      supportsPlanMode: true,
      supportsExitPlanMode: true,
      supportsPlanOptions: true,
      supportsStructuredUserInput: true,
      supportsFreeformUserInput: true,
      supportsMultiSelect: true,
      supportsAskMode: false
    })
    const changed = await log.waitFor("mode.changed", (e) => e.payload.mode === "plan")
    expect(changed.payload.nativeMode).toBe("plan")
    expect(await run(session.mode)).toBe("plan")
  })

  it("plan mode: AskUserQuestion answered as a card, TodoWrite, ExitPlanMode's own options, a Bash permission", async () => {
    const { log, session } = open
    const from = log.events.length
    model.script(
      {
        blocks: [
          {
            type: "tool_use",
            name: "AskUserQuestion",
            input: {
              questions: [
                {
                  question: DB_QUESTION,
                  header: "Database",
                  multiSelect: false,
                  options: [
                    { label: "PostgreSQL", description: "Relational." },
                    { label: "SQLite", description: "Embedded." }
                  ]
                }
              ]
            }
          }
        ]
      },
      {
        blocks: [
          {
            type: "tool_use",
            name: "TodoWrite",
            input: {
              todos: [
                { content: "Inspect the workspace", status: "in_progress", activeForm: "Inspecting the workspace" },
                { content: "Create hi.txt", status: "pending", activeForm: "Creating hi.txt" }
              ]
            }
          }
        ]
      },
      ...proposePlan(PLAN),
      {
        blocks: [
          { type: "tool_use", name: "Bash", input: { command: "echo hi > hi.txt", description: "Create hi.txt" } }
        ]
      },
      (request) => ({
        blocks: [{ type: "text", text: `Bash said: ${lastToolResults(request).map(toolResultText).join("|")}` }]
      })
    )
    const turnId = await run(session.startTurn({ text: "plan the creation of hi.txt" }))
    const asked = await log.waitFor("user-input.requested", () => true, { from, ms: 30_000 })
    const question = asked.payload.prompt.questions[0]!
    expect(question.options.map((o) => o.id)).toEqual(["PostgreSQL", "SQLite"])
    await run(
      session.respondToUserInput({
        promptId: asked.payload.prompt.promptId,
        answers: [{ questionId: QuestionId.make(question.id), selectedOptionIds: [OptionId.make("SQLite")] }]
      })
    )
    const review = await log.waitFor("request.opened", (e) => e.payload.requestKind === "plan_approval", {
      from,
      ms: 30_000
    })
    // The answer reached the model as chosen.
    const results = model.mainRequests().flatMap((r) => lastToolResults(r.body).map(toolResultText))
    expect(results.some((text) => text.includes(`"${DB_QUESTION}"="SQLite"`))).toBe(true)
    const proposed = log.events.slice(from).filter((e) => e.type === "plan.proposed.completed")
    expect(proposed).toHaveLength(1)
    expect(proposed[0]).toMatchObject({ turnId, payload: { markdown: PLAN, planId: review.payload.planId } })
    const ids = review.payload.options.map((o) => o.id)
    expect(ids).toEqual(expect.arrayContaining(["exit-plan-default", "exit-plan-auto", "reject"]))
    expect(ids.some((id) => id.startsWith("exit-plan-clear-"))).toBe(true)
    await run(
      session.decidePlan({
        planId: review.payload.planId!,
        decision: "approved",
        optionId: OptionId.make("exit-plan-default")
      })
    )
    await log.waitFor("mode.changed", (e) => e.payload.nativeMode === "default", { from })

    const approval = await log.waitFor("request.opened", (e) => e.payload.requestKind === "approval", {
      from,
      ms: 30_000
    })
    const allow = approval.payload.options.find((o) => o.kind === "allow_once")
    await run(session.respondToRequest(approval.payload.requestId, allow!.id))
    const completed = await log.waitFor("turn.completed", (e) => e.turnId === turnId, { ms: 30_000 })
    expect(completed.payload.status).toBe("completed")

    const turnEvents = log.events.slice(from)
    const snapshots = turnEvents.flatMap((e) => (e.type === "turn.plan.updated" ? [e.payload.plan] : []))
    expect(snapshots[0]).toMatchObject({
      source: "native",
      steps: [
        // 0.101 names a step in progress by its activeForm.
        { step: "Inspecting the workspace", status: "inProgress" },
        { step: "Create hi.txt", status: "pending" }
      ]
    })
    expect(turnEvents.find((e) => e.type === "plan.decision")?.payload).toMatchObject({ decision: "approved" })
    // The approved plan comes back as a plan_update: the same plan, not a second proposal.
    expect(turnEvents.filter((e) => e.type === "plan.proposed.completed")).toHaveLength(1)
    expect(existsSync(join(work, "hi.txt"))).toBe(true)
    expect(log.assistantText(turnId)).toContain("Bash said:")
  })

  it("the CLI's prompt suggestion after a turn leaves the next scripted turn to the next prompt", async () => {
    const { log, session } = open
    // Outside plan mode the CLI forks the conversation after a turn's result (offering its
    // tools) to predict the next prompt. Both turns scripted before the first starts: the
    // order that lost a turn in CI, when a test scripted before the prediction arrived.
    model.script(
      { blocks: [{ type: "text", text: "First reply." }] },
      { blocks: [{ type: "text", text: "Scripted for the next prompt." }] }
    )
    const before = model.requests.length
    const first = await run(session.startTurn({ text: "first" }))
    await log.waitFor("turn.completed", (e) => e.turnId === first, { ms: 30_000 })
    const suggested = await vi.waitFor(
      () => {
        const found = model.requests.slice(before).find((r) => lastUserText(r.body).startsWith("[SUGGESTION MODE:"))
        if (found === undefined) throw new Error("no prompt suggestion request yet")
        return found
      },
      { timeout: 20_000, interval: 50 }
    )
    expect(suggested.body.tools?.length ?? 0).toBeGreaterThan(0)
    const next = await run(session.startTurn({ text: "next" }))
    await log.waitFor("turn.completed", (e) => e.turnId === next, { ms: 30_000 })
    expect(log.assistantText(first)).toContain("First reply.")
    expect(log.assistantText(next)).toContain("Scripted for the next prompt.")
  })

  it("every ExitPlanMode option is reachable through plan.decide", async () => {
    const { log, session } = open
    const reached: Array<string> = []
    for (const option of ["reject", "exit-plan-auto", "exit-plan-clear", "exit-plan-bypass"]) {
      if ((await run(session.mode)) !== "plan") await run(session.setMode("plan"))
      const from = log.events.length
      model.script(...proposePlan(`1. Step for ${option}`))
      const turnId = await run(session.startTurn({ text: `plan for ${option}` }))
      const review = await log.waitFor("request.opened", (e) => e.payload.requestKind === "plan_approval", {
        from,
        ms: 30_000
      })
      const chosen = review.payload.options.find((o) => o.id === option || o.id.startsWith(`${option}-`))!
      const decision = chosen.kind?.startsWith("allow") === true ? "approved" : "rejected"
      if (decision === "rejected") {
        // A permission has nowhere to carry feedback: refused, not dropped.
        const planId = review.payload.planId!
        const withFeedback = await adapterFailure(
          session.decidePlan({ planId, decision, optionId: chosen.id, feedback: "smaller steps" })
        )
        expect(withFeedback.kind).toBe("unsupported")
      }
      await run(session.decidePlan({ planId: review.payload.planId!, decision, optionId: chosen.id }))
      await log.waitFor("turn.completed", (e) => e.turnId === turnId, { ms: 30_000 })
      const events = log.events.slice(from)
      expect(events.find((e) => e.type === "plan.decision")?.payload).toMatchObject({ decision })
      expect(events.find((e) => e.type === "request.resolved")?.payload).toMatchObject({ optionId: chosen.id })
      reached.push(chosen.id)
      // The agent switches itself: keep planning, an asking mode, or bypassPermissions (execute).
      const after = decision === "rejected" ? "plan" : chosen.id === "exit-plan-bypass" ? "execute" : "default"
      expect(await run(session.mode)).toBe(after)
    }
    expect(reached[0]).toBe("reject")
    expect(reached[1]).toBe("exit-plan-auto")
    expect(reached[2]).toMatch(/^exit-plan-clear-/)
    expect(reached[3]).toBe("exit-plan-bypass")
  })

  it("replaying the recorded transcript reproduces every live event (ids and times aside)", async () => {
    await open.close()
    const { live, replayed } = await replayOfLive(recorder, open.log, threadId)
    expect(replayed).toEqual(live)
  })

  it("in Claude's auto mode: canonical default, kept by session.start default", async () => {
    const autoHome = mkdtempSync(join(tmpdir(), "planbridge-claude-acp-auto-"))
    try {
      const autoWork = join(autoHome, "work")
      mkdirSync(autoWork)
      // A model the CLI offers auto mode for (its `supportsAutoMode`).
      const env: Record<string, string | undefined> = { ...claudeEnv(autoHome, model.baseUrl), ANTHROPIC_MODEL: "opus" }
      const configDir = join(autoHome, ".claude")
      mkdirSync(configDir, { recursive: true })
      writeFileSync(join(configDir, "settings.json"), JSON.stringify({ permissions: { defaultMode: "auto" } }))
      const adapter = makeAcpAdapter(claudeAcpProfile({ command }), { env })
      const auto = await openSession(adapter, {
        threadId: ThreadId.make("thread-claude-acp-auto"),
        cwd: autoWork,
        mode: "default"
      })
      try {
        expect(auto.log.ofType("session.configured")[0]?.payload).toMatchObject({ mode: "default", nativeMode: "auto" })
        expect(auto.log.ofType("mode.changed")).toEqual([])
        model.script({ blocks: [{ type: "text", text: "Working in auto." }] })
        const turnId = await run(auto.session.startTurn({ text: "hello" }))
        await auto.log.waitFor("turn.completed", (e) => e.turnId === turnId, { ms: 30_000 })
        expect(auto.log.assistantText(turnId)).toContain("Working in auto.")
        expect(await run(auto.session.mode)).toBe("default")
      } finally {
        await auto.close()
      }
    } finally {
      rmSync(autoHome, { recursive: true, force: true })
    }
  })
})
