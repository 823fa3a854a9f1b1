import { describe, expect, it } from "vitest"
import { claudeDemoTurn } from "../../src/demo/claudeDemoModel.ts"
import { codexDemoTurn } from "../../src/demo/codexDemoModel.ts"
import type { LoggedRequest, ResponsesInputItem } from "../../src/demo/mockResponsesModel.ts"
import type { MessagesRequest } from "../../src/demo/mockMessagesModel.ts"
import { checklistAt, HELP_TEXT, IMPLEMENT_TEXT, scenarioOf } from "../../src/demo/scenarios.ts"

/** The demo's scripts as pure functions of a request: the same conversation, the same answer. */
const codexRequest = (input: ReadonlyArray<ResponsesInputItem>): LoggedRequest => ({
  index: 0,
  method: "POST",
  path: "/v1/responses",
  headers: {},
  body: { input },
  unscripted: true
})
const user = (text: string): ResponsesInputItem => ({
  type: "message",
  role: "user",
  content: [
    { type: "input_text", text: "<environment_context>ask me anything</environment_context>" },
    { type: "input_text", text }
  ]
})
const toolNames = (turn: { output: ReadonlyArray<{ type: string; name?: string }> }) =>
  turn.output.map((o) => (o.type === "function_call" ? o.name : o.type))

describe("demo scenarios", () => {
  it("are chosen by keyword, first rule first, case-insensitive; anything else gets the help text", () => {
    expect(scenarioOf("Plan with QUESTIONS")).toBe("questions")
    expect(scenarioOf("a checklist please")).toBe("checklist")
    expect(scenarioOf("Propose a plan")).toBe("plan")
    expect(scenarioOf("run a command")).toBe("command")
    expect(scenarioOf("hello")).toBe("help")
  })

  it("the checklist moves one step per update and ends all done", () => {
    expect([0, 1, 2].map(checklistAt)).toEqual([
      ["in_progress", "pending", "pending"],
      ["completed", "in_progress", "pending"],
      ["completed", "completed", "completed"]
    ])
  })

  it("Codex: the step is the number of tool results since the user's message; only its last text part counts", () => {
    const turn = codexDemoTurn({ questions: true, planTags: true })
    expect(toolNames(turn(codexRequest([user("Ask questions")])))).toEqual(["text", "request_user_input"])
    const answered = [user("Ask questions"), { type: "function_call_output", call_id: "c", output: "{}" }]
    expect(toolNames(turn(codexRequest(answered)))).toEqual(["text"])
    expect(toolNames(turn(codexRequest([user("hello")])))).toEqual(["text"])
    expect(turn(codexRequest([user("hello")])).output[0]).toMatchObject({ text: HELP_TEXT })
    // A program without questions gets the plan straight away.
    expect(
      toolNames(codexDemoTurn({ questions: false, planTags: true })(codexRequest([user("Ask questions")])))
    ).toEqual(["text", "text"])
    // Deterministic: the same request, the same answer.
    expect(turn(codexRequest(answered))).toEqual(turn(codexRequest(answered)))
  })

  it("Claude: the step is the number of model answers since the user's text; reminders and caveats are skipped", () => {
    const turn = claudeDemoTurn({ questions: true })
    const body = (extra: MessagesRequest["messages"]): MessagesRequest => ({
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "<system-reminder>ask the user</system-reminder>" },
            { type: "text", text: "<local-command-caveat>unless the user explicitly asks</local-command-caveat>" },
            { type: "text", text: "Work through a checklist." }
          ]
        },
        ...(extra ?? [])
      ]
    })
    const names = (b: MessagesRequest) => turn(b).blocks.map((x) => (x.type === "tool_use" ? x.name : x.type))
    expect(names(body([]))).toEqual(["TodoWrite"])
    const answered = (n: number): MessagesRequest["messages"] =>
      Array.from({ length: n }, () => [
        { role: "assistant", content: [{ type: "tool_use" }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "ok" }] }
      ]).flat()
    expect(names(body(answered(2)))).toEqual(["TodoWrite"])
    expect(names(body(answered(3)))).toEqual(["text"])
  })

  it("issue 27: 'Implement the plan.' carries the plan on instead of proposing it again", () => {
    expect(scenarioOf("Implement the plan.")).toBe("implement")
    const codex = codexDemoTurn({ questions: true, planTags: true })(codexRequest([user("Implement the plan.")]))
    expect(codex.output).toEqual([expect.objectContaining({ type: "text", text: IMPLEMENT_TEXT })])
    const claude = claudeDemoTurn({ questions: true })({ messages: [{ role: "user", content: "Implement the plan." }] })
    expect(claude.blocks).toEqual([{ type: "text", text: IMPLEMENT_TEXT }])
  })

  it("issue 27: codex-acp gets its plan without <proposed_plan> tags, which only the app-server reads", () => {
    const planOf = (planTags: boolean) =>
      JSON.stringify(codexDemoTurn({ questions: false, planTags })(codexRequest([user("Propose a plan")])).output)
    expect(planOf(true)).toContain("<proposed_plan>")
    expect(planOf(false)).not.toContain("proposed_plan")
    expect(planOf(false)).toContain("Plan: a small greeting service")
  })

  it("issue 27: a checklist refused in plan mode is said, not played on to an empty turn", () => {
    const turn = codexDemoTurn({ questions: true, planTags: true })
    const after = (output: string) =>
      turn(codexRequest([user("Show me a checklist."), { type: "function_call_output", call_id: "c", output }]))
    expect(toolNames(after("Plan updated"))).toEqual(["update_plan"])
    const refused = after("update_plan is a TODO/checklist tool and is not allowed in Plan mode")
    expect(refused.output).toEqual([
      expect.objectContaining({ type: "text", text: expect.stringContaining("turn plan mode off") })
    ])
  })
})
