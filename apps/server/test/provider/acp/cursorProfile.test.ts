import { OptionId, PlanId, PromptId, QuestionId, RequestId, ThreadId } from "@planbridge/contracts"
import { resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAcpAdapter } from "../../../src/provider/acp/AcpAdapter.ts"
import { cursorProfile } from "../../../src/provider/acp/profiles/cursor.ts"
import { adapterFailure, openSession, processAlive, recording, replayOfLive, run, type OpenSession } from "./harness.ts"

const root = resolve(import.meta.dirname, "../../../../..")
const profile = cursorProfile({
  command: resolve(root, "node_modules/.bin/tsx"),
  args: [resolve(import.meta.dirname, "scriptedCursorAgent.ts")]
})
const env = { PATH: process.env.PATH, HOME: process.env.HOME, CURSOR_API_KEY: "test-key" }
const threadId = ThreadId.make("thread-cursor-1")
const { recorder, options } = recording("cursor", threadId)
const adapter = makeAcpAdapter(profile, { env, ...options })

describe("ACP client, Cursor profile, against a scripted Cursor agent (child process over stdio)", () => {
  let open: OpenSession
  let agentPid = -1

  beforeAll(async () => {
    open = await openSession(adapter, { threadId, cwd: root, mode: "plan" })
    const started = open.log.ofType("session.started")[0]
    const raw = started?.raw?.payload as { agentInfo?: { title?: string } } | undefined
    agentPid = Number(raw?.agentInfo?.title?.replace("pid:", "") ?? -1)
  })
  afterAll(async () => {
    await open?.close()
  })

  it("authenticates, publishes honest capabilities and switches to plan mode", async () => {
    const { log, session } = open
    const configured = log.ofType("session.configured")[0]
    expect(configured?.payload).toMatchObject({ mode: "default", nativeMode: "agent", model: "auto" })
    expect(configured?.payload.capabilities).toEqual({
      supportsPlanMode: true,
      supportsAskMode: true,
      supportsStructuredPlanUpdates: false,
      supportsPlanTextStreaming: false,
      supportsStructuredUserInput: true,
      supportsFreeformUserInput: false,
      supportsMultiSelect: true,
      supportsExitPlanMode: true,
      supportsPlanFeedback: true,
      supportsModeSwitching: true,
      supportsResume: true
    })
    expect(log.ofType("session.started")[0]?.payload).toMatchObject({
      resumed: false,
      nativeSessionId: "scripted-cursor-session-1"
    })
    const changed = await log.waitFor("mode.changed", (e) => e.payload.mode === "plan")
    expect(changed.payload.nativeMode).toBe("plan")
    expect(changed.raw?.payload).toMatchObject({
      update: { sessionUpdate: "current_mode_update", currentModeId: "plan" }
    })
    expect(await run(session.mode)).toBe("plan")
    await run(session.setMode("ask"))
    expect((await log.waitFor("mode.changed", (e) => e.payload.mode === "ask")).payload.nativeMode).toBe("ask")
    await run(session.setMode("plan"))
    expect(await run(session.mode)).toBe("plan")
  })

  it("maps chunks, todos, a question, a proposed plan and a permission; answers reach the agent", async () => {
    const { log, session } = open
    const from = log.events.length
    const turnId = await run(session.startTurn({ text: "SCENARIO:FULL" }))
    expect(log.events.slice(from).find((e) => e.type === "turn.started")).toMatchObject({
      turnId,
      payload: { mode: "plan" }
    })

    const asked = await log.waitFor("user-input.requested", () => true, { from })
    const prompt = asked.payload.prompt
    expect(prompt).toMatchObject({ title: "A few choices", source: "native", blocking: true })
    expect(prompt.questions.map((q) => [q.id, q.label, q.multiSelect, q.options.map((o) => o.id)])).toEqual([
      ["lang", "Which language?", false, ["ts", "rs"]],
      ["extras", "Which extras?", true, ["tests", "docs", "ci"]]
    ])
    // Refused before anything reaches the agent.
    const bad = await adapterFailure(
      session.respondToUserInput({
        promptId: prompt.promptId,
        answers: [{ questionId: QuestionId.make("lang"), selectedOptionIds: [OptionId.make("go")] }]
      })
    )
    expect(bad.kind).toBe("invalid_answer")
    await run(
      session.respondToUserInput({
        promptId: prompt.promptId,
        answers: [
          { questionId: QuestionId.make("lang"), selectedOptionIds: [OptionId.make("ts")] },
          { questionId: QuestionId.make("extras"), selectedOptionIds: [OptionId.make("tests"), OptionId.make("docs")] }
        ]
      })
    )
    const again = await adapterFailure(
      session.respondToUserInput({
        promptId: prompt.promptId,
        answers: [{ questionId: QuestionId.make("lang"), selectedOptionIds: [OptionId.make("rs")] }]
      })
    )
    expect(again.kind).toBe("prompt_not_pending")

    const proposed = await log.waitFor("plan.proposed.completed", () => true, { from })
    expect(proposed.payload).toMatchObject({
      title: "Hello plan",
      markdown: "Create one file.\n\n# Plan\n1. Create hello.txt\n2. Report back"
    })
    const planRequest = await log.waitFor("request.opened", (e) => e.payload.requestKind === "plan_approval", { from })
    expect(planRequest.payload.planId).toBe(proposed.payload.planId)
    await run(session.decidePlan({ planId: proposed.payload.planId, decision: "approved" }))

    const approval = await log.waitFor("request.opened", (e) => e.payload.requestKind === "approval", { from })
    expect(approval.payload.options.map((o) => [o.id, o.kind])).toEqual([
      ["allow-once", "allow_once"],
      ["allow-always", "allow_always"],
      ["reject-once", "reject_once"]
    ])
    expect(approval.itemId).toBe(`${turnId}:tool:edit-1\nsecond-line`)
    const wrong = await adapterFailure(session.respondToRequest(approval.payload.requestId, OptionId.make("maybe")))
    expect(wrong.kind).toBe("invalid_answer")
    await run(session.respondToRequest(approval.payload.requestId, OptionId.make("allow-once")))

    const completed = await log.waitFor("turn.completed", (e) => e.turnId === turnId)
    expect(completed.payload.status).toBe("completed")
    const turnEvents = log.events.slice(from)

    // Reasoning and assistant text are separate items.
    const deltas = turnEvents.flatMap((e) =>
      e.type === "content.delta" ? [[e.payload.streamKind, e.payload.delta] as const] : []
    )
    expect(deltas.slice(0, 4)).toEqual([
      ["reasoning_text", "Planning the "],
      ["reasoning_text", "work."],
      ["assistant_text", "Let me plan "],
      ["assistant_text", "this.\n"]
    ])
    const text = log.assistantText(turnId)
    expect(text).toContain(
      'RECEIVED cursor/ask_question {"outcome":{"outcome":"answered","answers":[{"questionId":"lang","selectedOptionIds":["ts"]},{"questionId":"extras","selectedOptionIds":["tests","docs"]}]}}'
    )
    expect(text).toContain('RECEIVED cursor/create_plan {"outcome":{"outcome":"accepted"}}')
    expect(text).toContain(
      'RECEIVED session/request_permission {"outcome":{"outcome":"selected","optionId":"allow-once"}}'
    )
    expect(text).toContain("RECEIVED cursor/update_todos")

    // Todo list: replaced, then merged by id; structured plans switched on at the first one.
    const snapshots = turnEvents.flatMap((e) => (e.type === "turn.plan.updated" ? [e.payload.plan] : []))
    expect(snapshots.map((p) => p.steps.map((s) => [s.id, s.step, s.status]))).toEqual([
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
    expect(snapshots.every((p) => p.source === "native")).toBe(true)
    const capsChanged = turnEvents.filter((e) => e.type === "capabilities.changed")
    expect(capsChanged).toHaveLength(1)
    expect(turnEvents.indexOf(capsChanged[0]!)).toBeLessThan(
      turnEvents.findIndex((e) => e.type === "turn.plan.updated")
    )
    expect(await run(session.capabilities)).toMatchObject({ supportsStructuredPlanUpdates: true })

    // Resolutions are emitted before the agent saw the answer (it echoes it afterwards).
    const resolvedAt = turnEvents.findIndex((e) => e.type === "user-input.resolved")
    const echoedAt = turnEvents.findIndex(
      (e) => e.type === "content.delta" && e.payload.delta.startsWith("RECEIVED cursor/ask_question")
    )
    expect(resolvedAt).toBeGreaterThan(-1)
    expect(resolvedAt).toBeLessThan(echoedAt)
    expect(turnEvents.find((e) => e.type === "user-input.resolved")).toMatchObject({
      payload: {
        resolution: "answered",
        answers: [
          { questionId: "lang", selectedOptionIds: ["ts"] },
          { questionId: "extras", selectedOptionIds: ["tests", "docs"] }
        ]
      }
    })
    expect(turnEvents.find((e) => e.type === "plan.decision")).toMatchObject({
      payload: { planId: proposed.payload.planId, decision: "approved" }
    })
    expect(
      turnEvents.filter((e) => e.type === "request.resolved").map((e) => [e.payload.resolution, e.payload.optionId])
    ).toEqual([
      ["responded", undefined],
      ["responded", "accept"],
      ["responded", "allow-once"]
    ])
    // The edit tool call: started pending, completed after the approval; its id keeps the newline.
    const tool = turnEvents.flatMap((e) =>
      (e.type === "item.started" || e.type === "item.completed") && e.payload.itemType === "file_change"
        ? [[e.type, e.payload.status, e.payload.toolName]]
        : []
    )
    expect(tool).toEqual([
      ["item.started", "inProgress", "edit"],
      ["item.completed", "completed", "edit"]
    ])
    expect(turnEvents.every((e) => e.raw !== undefined)).toBe(true)
  })

  it("carries rejections: a skipped question, a rejected plan with feedback, a rejected permission", async () => {
    const { log, session } = open
    const from = log.events.length
    const turnId = await run(session.startTurn({ text: "SCENARIO:FULL" }))
    const asked = await log.waitFor("user-input.requested", () => true, { from })
    await run(session.dismissUserInput(asked.payload.prompt.promptId, "empty"))
    const proposed = await log.waitFor("plan.proposed.completed", () => true, { from })
    const edited = await adapterFailure(
      session.decidePlan({ planId: proposed.payload.planId, decision: "edited", editedMarkdown: "x" })
    )
    expect(edited.kind).toBe("unsupported")
    await run(session.decidePlan({ planId: proposed.payload.planId, decision: "rejected", feedback: "Use two files." }))
    const approval = await log.waitFor("request.opened", (e) => e.payload.requestKind === "approval", { from })
    await run(session.respondToRequest(approval.payload.requestId, OptionId.make("reject-once")))
    await log.waitFor("turn.completed", (e) => e.turnId === turnId)
    const text = log.assistantText(turnId)
    expect(text).toContain('RECEIVED cursor/ask_question {"outcome":{"outcome":"skipped"}}')
    expect(text).toContain('RECEIVED cursor/create_plan {"outcome":{"outcome":"rejected","reason":"Use two files."}}')
    expect(text).toContain(
      'RECEIVED session/request_permission {"outcome":{"outcome":"selected","optionId":"reject-once"}}'
    )
    const turnEvents = log.events.slice(from)
    expect(turnEvents.find((e) => e.type === "user-input.resolved")?.payload).toMatchObject({
      resolution: "empty",
      answers: []
    })
    expect(turnEvents.find((e) => e.type === "plan.decision")?.payload).toMatchObject({
      decision: "rejected",
      feedback: "Use two files."
    })
    const tool = turnEvents.filter((e) => e.type === "item.completed" && e.payload.itemType === "file_change")
    expect(tool.map((e) => e.type === "item.completed" && e.payload.status)).toEqual(["failed"])
  })

  it("cancels a turn with a permission pending: answered cancelled, turn interrupted, late answers refused", async () => {
    const { log, session } = open
    const from = log.events.length
    const turnId = await run(session.startTurn({ text: "SCENARIO:WAIT_PERMISSION" }))
    const opened = await log.waitFor("request.opened", () => true, { from })
    // No tool_call was announced for this request; it is still a request of this turn.
    expect(opened.turnId).toBe(turnId)
    const busy = await adapterFailure(session.startTurn({ text: "another" }))
    expect(busy.kind).toBe("busy")
    await run(session.interrupt())
    const completed = await log.waitFor("turn.completed", (e) => e.turnId === turnId)
    expect(completed.payload.status).toBe("interrupted")
    expect(log.events.slice(from).find((e) => e.type === "request.resolved")?.payload).toMatchObject({
      requestId: opened.payload.requestId,
      resolution: "cancelled"
    })
    expect(log.assistantText(turnId)).toContain(
      'RECEIVED session/request_permission {"outcome":{"outcome":"cancelled"}}'
    )
    const late = await adapterFailure(session.respondToRequest(opened.payload.requestId, OptionId.make("allow-once")))
    expect(late.kind).toBe("request_not_pending")
  })

  it("cancels a turn with a question pending: the prompt resolves cancelled and the agent is told", async () => {
    const { log, session } = open
    const from = log.events.length
    const turnId = await run(session.startTurn({ text: "SCENARIO:WAIT_QUESTION" }))
    const asked = await log.waitFor("user-input.requested", () => true, { from })
    await run(session.interrupt())
    expect((await log.waitFor("turn.completed", (e) => e.turnId === turnId)).payload.status).toBe("interrupted")
    expect(log.events.slice(from).find((e) => e.type === "user-input.resolved")?.payload).toMatchObject({
      resolution: "cancelled"
    })
    expect(log.assistantText(turnId)).toContain('RECEIVED cursor/ask_question {"outcome":{"outcome":"cancelled"}}')
    const late = await adapterFailure(
      session.respondToUserInput({
        promptId: asked.payload.prompt.promptId,
        answers: [{ questionId: QuestionId.make("lang"), selectedOptionIds: [OptionId.make("ts")] }]
      })
    )
    expect(late.kind).toBe("prompt_not_pending")
    expect((await adapterFailure(session.dismissUserInput(PromptId.make("nope"), "empty"))).kind).toBe(
      "prompt_not_pending"
    )
    expect((await adapterFailure(session.respondToRequest(RequestId.make("nope"), OptionId.make("x")))).kind).toBe(
      "request_not_pending"
    )
    expect((await adapterFailure(session.decidePlan({ planId: PlanId.make("nope"), decision: "approved" }))).kind).toBe(
      "request_not_pending"
    )
  })

  it("reads an ACP form elicitation as questions and answers it with typed content", async () => {
    const { log, session } = open
    const from = log.events.length
    const turnId = await run(session.startTurn({ text: "SCENARIO:ELICIT" }))
    const asked = await log.waitFor("user-input.requested", () => true, { from })
    const prompt = asked.payload.prompt
    expect(prompt.title).toBe("Configure the project")
    expect(
      prompt.questions.map((q) => [
        q.id,
        q.label,
        q.options.map((o) => o.id),
        q.multiSelect,
        q.allowFreeform,
        q.required
      ])
    ).toEqual([
      ["name", "Project name", [], false, true, true],
      ["size", "Size", [], false, true, false],
      ["lang", "Language", ["ts", "rs"], false, false, true],
      ["ci", "Set up CI?", ["true", "false"], false, false, false],
      ["extras", "Extras", ["tests", "docs"], true, false, false]
    ])
    const q = (id: string) => QuestionId.make(id)
    const o = (id: string) => OptionId.make(id)
    const notANumber = await adapterFailure(
      session.respondToUserInput({
        promptId: prompt.promptId,
        answers: [
          { questionId: q("name"), text: "demo" },
          { questionId: q("lang"), selectedOptionIds: [o("ts")] },
          { questionId: q("size"), text: "three" }
        ]
      })
    )
    expect(notANumber.kind).toBe("invalid_answer")
    await run(
      session.respondToUserInput({
        promptId: prompt.promptId,
        answers: [
          { questionId: q("name"), text: "demo" },
          { questionId: q("size"), text: "3" },
          { questionId: q("lang"), selectedOptionIds: [o("rs")] },
          { questionId: q("ci"), selectedOptionIds: [o("true")] },
          { questionId: q("extras"), selectedOptionIds: [o("tests"), o("docs")] }
        ]
      })
    )
    await log.waitFor("turn.completed", (e) => e.turnId === turnId)
    expect(log.assistantText(turnId)).toContain(
      'RECEIVED elicitation/create {"action":"accept","content":{"name":"demo","size":3,"lang":"rs","ci":true,"extras":["tests","docs"]}}'
    )
    expect(log.events.slice(from).find((e) => e.type === "user-input.resolved")?.payload).toMatchObject({
      resolution: "answered",
      answers: [
        { questionId: "name", text: "demo" },
        { questionId: "size", text: "3" },
        { questionId: "lang", selectedOptionIds: ["rs"] },
        { questionId: "ci", selectedOptionIds: ["true"] },
        { questionId: "extras", selectedOptionIds: ["tests", "docs"] }
      ]
    })
  })

  it("answers an unknown extension request with a JSON-RPC error and a warning carrying the raw payload", async () => {
    const { log, session } = open
    const from = log.events.length
    const turnId = await run(session.startTurn({ text: "SCENARIO:UNKNOWN_EXTENSION" }))
    await log.waitFor("turn.completed", (e) => e.turnId === turnId)
    const warning = log.events.slice(from).find((e) => e.type === "runtime.warning")
    expect(warning?.payload).toMatchObject({
      code: "unknown_request",
      detail: { method: "cursor/teleport", params: { destination: "mars" } }
    })
    expect(warning?.raw).toMatchObject({
      source: "acp.request",
      method: "cursor/teleport",
      payload: { destination: "mars" }
    })
    expect(log.assistantText(turnId)).toContain("ERROR cursor/teleport -32601")
    expect(log.assistantText(turnId)).toContain("Carrying on.")
  })

  it("kills the agent's whole process group when the scope closes, and reports the exit", async () => {
    expect(agentPid).toBeGreaterThan(0)
    expect(processAlive(agentPid)).toBe(true)
    await open.close()
    expect(open.log.ofType("session.exited")[0]?.payload).toMatchObject({ exitKind: "killed" })
    expect(processAlive(agentPid)).toBe(false)
  })

  it("replaying the recorded transcript reproduces every live event (ids and times aside)", async () => {
    await open.close()
    const { live, replayed } = await replayOfLive(recorder, open.log, threadId)
    expect(live.length).toBeGreaterThan(50)
    expect(replayed).toEqual(live)
  })
})
