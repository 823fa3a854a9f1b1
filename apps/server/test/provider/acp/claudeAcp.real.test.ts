import { ThreadId } from "@planbridge/contracts"
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAcpAdapter } from "../../../src/provider/acp/AcpAdapter.ts"
import { claudeAcpProfile } from "../../../src/provider/acp/profiles/claudeAcp.ts"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import {
  lastToolResults,
  startMockMessagesModel,
  toolResultText,
  type MockMessagesModel
} from "../../support/mockMessagesModel.ts"
import { adapterFailure, openSession, recording, replayOfLive, run, type OpenSession } from "./harness.ts"
import { claudeEnv } from "./peers.ts"

const root = resolve(import.meta.dirname, "../../../../..")
const threadId = ThreadId.make("thread-claude-acp")
const { recorder, options } = recording("acp-claude", threadId)

const PLAN = "1. Inspect the workspace\n2. Create hi.txt\n3. Report back"

describe("ACP client against the real claude-agent-acp 0.23.1 (scripted Messages model on loopback)", () => {
  let model: MockMessagesModel
  let home: string
  let work: string
  let open: OpenSession

  beforeAll(async () => {
    assertLoopbackOnly()
    model = await startMockMessagesModel()
    home = mkdtempSync(join(tmpdir(), "planbridge-claude-acp-"))
    work = join(home, "work")
    mkdirSync(work)
    const adapter = makeAcpAdapter(claudeAcpProfile({ command: resolve(root, "node_modules/.bin/claude-agent-acp") }), {
      env: claudeEnv(home, model.baseUrl),
      ...options
    })
    open = await openSession(adapter, { threadId, cwd: work, mode: "plan" })
  })
  afterAll(async () => {
    await open?.close()
    await model?.close()
    if (home !== undefined) rmSync(home, { recursive: true, force: true })
  })

  it("starts in plan mode: the switch is reflected from claude-agent-acp's echo", async () => {
    const { log, session } = open
    const configured = log.ofType("session.configured")[0]
    expect(configured?.payload).toMatchObject({ mode: "default", nativeMode: "default" })
    expect(configured?.payload.capabilities).toMatchObject({
      supportsPlanMode: true,
      supportsExitPlanMode: true,
      supportsAskMode: false
    })
    const changed = await log.waitFor("mode.changed", (e) => e.payload.mode === "plan")
    expect(changed.payload.nativeMode).toBe("plan")
    expect(await run(session.mode)).toBe("plan")
  })

  it("maps TodoWrite to plan snapshots, ExitPlanMode to a proposed plan and decision, and a Bash permission", async () => {
    const { log, session } = open
    const from = log.events.length
    model.script(
      {
        blocks: [
          { type: "text", text: "Let me plan this." },
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
      {
        blocks: [
          { type: "text", text: "Here is my plan." },
          { type: "tool_use", name: "ExitPlanMode", input: { plan: PLAN } }
        ]
      },
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

    const planRequest = await log.waitFor("request.opened", (e) => e.payload.requestKind === "plan_approval", {
      from,
      ms: 30_000
    })
    const proposed = log.events.slice(from).find((e) => e.type === "plan.proposed.completed")
    expect(proposed).toMatchObject({ turnId, payload: { markdown: PLAN } })
    expect(proposed?.type === "plan.proposed.completed" && proposed.payload.planId).toBe(planRequest.payload.planId)
    await run(session.decidePlan({ planId: planRequest.payload.planId!, decision: "approved" }))
    await log.waitFor("mode.changed", (e) => e.payload.mode === "default", { from })

    const approval = await log.waitFor("request.opened", (e) => e.payload.requestKind === "approval", {
      from,
      ms: 30_000
    })
    const allow = approval.payload.options.find((o) => o.kind === "allow_once")
    expect(allow).toBeDefined()
    await run(session.respondToRequest(approval.payload.requestId, allow!.id))
    const completed = await log.waitFor("turn.completed", (e) => e.turnId === turnId, { ms: 30_000 })
    expect(completed.payload.status).toBe("completed")

    const turnEvents = log.events.slice(from)
    const snapshots = turnEvents.flatMap((e) => (e.type === "turn.plan.updated" ? [e.payload.plan] : []))
    expect(snapshots[0]).toMatchObject({
      source: "native",
      steps: [
        { step: "Inspect the workspace", status: "inProgress" },
        { step: "Create hi.txt", status: "pending" }
      ]
    })
    expect(turnEvents.filter((e) => e.type === "capabilities.changed")).toHaveLength(1)
    expect(turnEvents.find((e) => e.type === "plan.decision")?.payload).toMatchObject({
      planId: planRequest.payload.planId,
      decision: "approved"
    })
    expect(turnEvents.filter((e) => e.type === "request.resolved").map((e) => e.payload.resolution)).toEqual([
      "responded",
      "responded"
    ])
    expect(existsSync(join(work, "hi.txt"))).toBe(true)
    expect(log.assistantText(turnId)).toContain("Bash said:")
  })

  it("rejects a second ExitPlanMode: feedback it cannot carry is refused, a plain rejection keeps Claude planning", async () => {
    const { log, session } = open
    const from = log.events.length
    await run(session.setMode("plan"))
    expect((await log.waitFor("mode.changed", (e) => e.payload.mode === "plan", { from })).payload.nativeMode).toBe(
      "plan"
    )
    model.script(
      { blocks: [{ type: "tool_use", name: "ExitPlanMode", input: { plan: "1. Do it all at once" } }] },
      (request) => ({
        blocks: [
          { type: "text", text: `Denied: ${lastToolResults(request).map(toolResultText).join("|").slice(0, 60)}` }
        ]
      })
    )
    const turnId = await run(session.startTurn({ text: "plan again" }))
    const planRequest = await log.waitFor("request.opened", (e) => e.payload.requestKind === "plan_approval", {
      from,
      ms: 30_000
    })
    const planId = planRequest.payload.planId!
    const withFeedback = await adapterFailure(
      session.decidePlan({ planId, decision: "rejected", feedback: "smaller steps" })
    )
    expect(withFeedback.reason).toBe("unsupported")
    await run(session.decidePlan({ planId, decision: "rejected" }))
    const completed = await log.waitFor("turn.completed", (e) => e.turnId === turnId, { ms: 30_000 })
    expect(completed.payload.status).toBe("completed")
    const turnEvents = log.events.slice(from)
    expect(turnEvents.find((e) => e.type === "plan.decision")?.payload).toMatchObject({ planId, decision: "rejected" })
    expect(turnEvents.find((e) => e.type === "request.resolved")?.payload).toMatchObject({ optionId: "plan" })
    expect(await run(session.mode)).toBe("plan")
    expect(log.assistantText(turnId)).toContain("Denied:")
  })

  it("cancels a turn whose Bash permission is pending: the client answers cancelled, the turn is interrupted", async () => {
    const { log, session } = open
    const from = log.events.length
    await run(session.setMode("default"))
    model.script({
      blocks: [{ type: "tool_use", name: "Bash", input: { command: "echo no > no.txt", description: "Create no.txt" } }]
    })
    const turnId = await run(session.startTurn({ text: "create no.txt" }))
    const opened = await log.waitFor("request.opened", (e) => e.payload.requestKind === "approval", {
      from,
      ms: 30_000
    })
    await run(session.interrupt())
    const completed = await log.waitFor("turn.completed", (e) => e.turnId === turnId, { ms: 30_000 })
    expect(completed.payload.status).toBe("interrupted")
    expect(log.events.slice(from).find((e) => e.type === "request.resolved")?.payload).toMatchObject({
      requestId: opened.payload.requestId,
      resolution: "cancelled"
    })
    expect(existsSync(join(work, "no.txt"))).toBe(false)
  })

  it("replaying the recorded transcript reproduces every live event (ids and times aside)", async () => {
    await open.close()
    const { live, replayed } = await replayOfLive(recorder, open.log, threadId)
    expect(replayed).toEqual(live)
  })
})
