import type { OptionId, PromptId, QuestionId, ThreadId } from "@planbridge/contracts"
import { describe, expect, it } from "vitest"
import { applyChecklistResult } from "../../../src/provider/claude/ClaudeChecklist.ts"
import { answerDecision, dismissDecision } from "../../../src/provider/claude/ClaudeDecisions.ts"
import { canonicalMode, nativeMode } from "../../../src/provider/claude/ClaudeModes.ts"
import { entriesFromNativeAnswers, promptFromAskUserQuestion } from "../../../src/provider/claude/ClaudePrompts.ts"
import { checkAnswer } from "../../../src/provider/kernel/CheckedAnswer.ts"
import type { ClaudeLine } from "../../../src/provider/claude/ClaudeTranscript.ts"
import type { EventDraft } from "../../../src/provider/kernel/EventDraft.ts"
import { local, makeMapping, sdk } from "./claudeLines.ts"

/**
 * The pure mapping, on hand-written lines in the shape the SDK 0.3.333 produces (the
 * reference recordings carry `canUseTool-result` lines without a tool-use id; those pair up by
 * order and their resolutions are derived from the native result).
 */

const startMsg = {
  kind: "start",
  cwd: "/w",
  permissionMode: "plan",
  model: "claude-sonnet-4-5",
  sessionId: "s"
} as const
const start: ClaudeLine = local(0, startMsg)
const user: ClaudeLine = local(1, { kind: "user", turnId: "turn-1", text: "go" })
const toolUse = (id: string, name: string, input: unknown): ClaudeLine =>
  sdk(2, {
    type: "assistant",
    message: { id: `msg-${id}`, content: [{ type: "tool_use", id, name, input }] },
    parent_tool_use_id: null
  })
const toolResult = (id: string, content: string, result: unknown, isError = false): ClaudeLine =>
  sdk(3, {
    type: "user",
    message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, content, is_error: isError }] },
    tool_use_result: result
  })
const canUse = (id: string, toolName: string, input: Record<string, unknown>): ClaudeLine =>
  local(4, {
    kind: "canUseTool",
    toolName,
    input,
    options: { toolUseID: id }
  })

const run = (lines: ReadonlyArray<ClaudeLine>): ReadonlyArray<EventDraft> =>
  [start, user, ...lines].flatMap(makeMapping("thread" as ThreadId))
const types = (drafts: ReadonlyArray<EventDraft>) =>
  drafts.map((d) => d.type).filter((t) => t !== "session.state.changed")
const pick = <T extends EventDraft["type"]>(drafts: ReadonlyArray<EventDraft>, type: T) =>
  drafts.filter((d): d is Extract<EventDraft, { type: T }> => d.type === type)

const questions = {
  questions: [
    { question: "Style?", header: "Style", options: [{ label: "Formal" }, { label: "Casual" }], multiSelect: false },
    { question: "Extras?", header: "Extras", options: [{ label: "Colors" }, { label: "Emoji" }], multiSelect: true },
    { question: "Name?", header: "Name", options: [{ label: "World" }, { label: "You" }], multiSelect: false },
    { question: "More?", header: "More", options: [{ label: "A" }, { label: "B" }], multiSelect: true }
  ]
}

describe("Claude mapping: classification by exact tool name", () => {
  it("never takes a look-alike or MCP tool for a prompt or a plan exit", () => {
    const drafts = run([
      toolUse("t1", "AskUserQuestionHelper", questions),
      toolUse("t2", "mcp__srv__AskUserQuestion", questions),
      toolUse("t3", "ExitPlanModeNow", { plan: "# not a plan" }),
      canUse("t2", "mcp__srv__AskUserQuestion", questions),
      toolResult("t1", "ok", null)
    ])
    expect(types(drafts)).not.toContain("user-input.requested")
    expect(types(drafts)).not.toContain("plan.proposed.completed")
    expect(pick(drafts, "item.started").map((d) => d.payload.toolName)).toEqual([
      "AskUserQuestionHelper",
      "mcp__srv__AskUserQuestion",
      "ExitPlanModeNow"
    ])
    expect(pick(drafts, "request.opened").map((d) => d.payload.requestKind)).toEqual(["approval"])
    expect(pick(drafts, "item.completed").at(-1)?.payload).toMatchObject({
      toolName: "AskUserQuestionHelper",
      status: "completed",
      text: "ok"
    })
  })

  it("maps AskUserQuestion 1:1 and opens it once, whichever of tool use and callback comes first", () => {
    const drafts = run([canUse("q", "AskUserQuestion", questions), toolUse("q", "AskUserQuestion", questions)])
    const [requested] = pick(drafts, "user-input.requested")
    expect(pick(drafts, "user-input.requested")).toHaveLength(1)
    expect(requested?.payload.prompt).toMatchObject({
      promptId: "thread:prompt:q",
      source: "tool-derived",
      blocking: true
    })
    expect(requested?.payload.prompt.questions[1]).toEqual({
      id: "q1",
      header: "Extras",
      label: "Extras?",
      options: [
        { id: "q1.o0", label: "Colors" },
        { id: "q1.o1", label: "Emoji" }
      ],
      multiSelect: true,
      allowFreeform: true,
      secret: false,
      required: false
    })
    expect(pick(drafts, "request.opened")[0]?.payload).toMatchObject({
      requestKind: "user_input",
      promptId: "thread:prompt:q",
      native: { method: "canUseTool", id: "q" }
    })
  })

  it("reports a malformed AskUserQuestion input instead of inventing a prompt", () => {
    const drafts = run([toolUse("q", "AskUserQuestion", { questions: "which?" })])
    expect(types(drafts)).toContain("runtime.warning")
    expect(types(drafts)).not.toContain("user-input.requested")
  })
})

describe("Claude mapping: resolutions derived from recorded callback results", () => {
  it("reads labels, joined labels, arrays and free text back into canonical answers", () => {
    const drafts = run([
      toolUse("q", "AskUserQuestion", questions),
      canUse("q", "AskUserQuestion", questions),
      local(5, {
        kind: "canUseTool-result",
        toolName: "AskUserQuestion",
        result: {
          behavior: "allow",
          updatedInput: {
            ...questions,
            answers: { "Style?": "Casual", "Extras?": "Colors, Emoji", "Name?": "Planbridge", "More?": ["A", "B"] },
            annotations: { "Style?": { notes: "but polite" } }
          }
        }
      })
    ])
    expect(pick(drafts, "user-input.resolved")[0]?.payload).toEqual({
      promptId: "thread:prompt:q",
      resolution: "answered",
      answers: [
        { questionId: "q0", selectedOptionIds: ["q0.o1"], text: "but polite" },
        { questionId: "q1", selectedOptionIds: ["q1.o0", "q1.o1"] },
        { questionId: "q2", text: "Planbridge" },
        { questionId: "q3", selectedOptionIds: ["q3.o0", "q3.o1"] }
      ]
    })
    expect(pick(drafts, "request.resolved")[0]?.payload.resolution).toBe("responded")
  })

  it("allow without answers is empty; deny is cancelled", () => {
    const empty = run([
      canUse("q", "AskUserQuestion", questions),
      local(5, {
        kind: "canUseTool-result",
        toolName: "AskUserQuestion",
        result: { behavior: "allow", updatedInput: questions }
      })
    ])
    expect(pick(empty, "user-input.resolved")[0]?.payload.resolution).toBe("empty")
    const denied = run([
      canUse("q", "AskUserQuestion", questions),
      local(5, { kind: "canUseTool-result", toolName: "AskUserQuestion", result: { behavior: "deny", message: "no" } })
    ])
    expect(pick(denied, "user-input.resolved")[0]?.payload.resolution).toBe("cancelled")
  })

  it("ExitPlanMode: the callback's plan text is the proposed plan; deny is a rejection with feedback, a changed plan an edit", () => {
    const input = { plan: "# Plan\n1. a\n", planFilePath: "/h/.claude/plans/p.md" }
    const rejected = run([
      toolUse("p", "ExitPlanMode", {}),
      canUse("p", "ExitPlanMode", input),
      local(5, {
        kind: "canUseTool-result",
        toolName: "ExitPlanMode",
        result: { behavior: "deny", message: "Add tests." }
      })
    ])
    expect(pick(rejected, "plan.proposed.completed")[0]?.payload).toEqual({
      planId: "thread/plan/p",
      markdown: input.plan,
      filePath: input.planFilePath
    })
    expect(pick(rejected, "request.opened")[0]?.payload).toMatchObject({
      requestKind: "plan_approval",
      planId: "thread/plan/p"
    })
    expect(pick(rejected, "plan.decision")[0]?.payload).toEqual({
      planId: "thread/plan/p",
      decision: "rejected",
      feedback: "Add tests."
    })
    const edited = run([
      canUse("p", "ExitPlanMode", input),
      local(5, {
        kind: "canUseTool-result",
        toolName: "ExitPlanMode",
        result: { behavior: "allow", updatedInput: { ...input, plan: "# Better" } }
      })
    ])
    expect(pick(edited, "plan.decision")[0]?.payload).toEqual({
      planId: "thread/plan/p",
      decision: "edited",
      editedMarkdown: "# Better"
    })
  })

  it("the process exit resolves what is pending provider_exited and fails the turn", () => {
    const drafts = run([
      canUse("q", "AskUserQuestion", questions),
      local(9, { kind: "exit", exitKind: "killed", exitCode: null, signal: "SIGKILL", message: "terminated" })
    ])
    expect(types(drafts).slice(-4)).toEqual([
      "user-input.resolved",
      "request.resolved",
      "turn.completed",
      "session.exited"
    ])
    expect(pick(drafts, "user-input.resolved")[0]?.payload.resolution).toBe("provider_exited")
    expect(pick(drafts, "turn.completed")[0]?.payload).toMatchObject({ status: "failed" })
  })
})

describe("Claude mapping: turns, modes, streams", () => {
  const result = (subtype: string, terminal: string | null): ClaudeLine =>
    sdk(9, {
      type: "result",
      subtype,
      is_error: subtype !== "success",
      duration_ms: 12,
      terminal_reason: terminal,
      usage: { input_tokens: 5, output_tokens: 7, cache_read_input_tokens: 1 }
    })

  it("aborted tools end the turn interrupted; other errors fail it; the turn's pending prompts are cancelled", () => {
    const interrupted = run([
      canUse("q", "AskUserQuestion", questions),
      result("error_during_execution", "aborted_tools")
    ])
    expect(pick(interrupted, "user-input.resolved")[0]?.payload).toMatchObject({ resolution: "cancelled" })
    expect(pick(interrupted, "turn.completed")[0]?.payload).toEqual({
      status: "interrupted",
      usage: { inputTokens: 5, outputTokens: 7, cachedInputTokens: 1 },
      durationMs: 12
    })
    const failed = run([result("error_max_turns", "max_turns")])
    expect(pick(failed, "turn.completed")[0]?.payload).toMatchObject({
      status: "failed",
      error: { code: "error_max_turns" }
    })
    expect(pick(failed, "turn.completed")[0]?.turnId).toBe("turn-1")
  })

  it("reads the mode back from system/init and system/status, announcing only changes", () => {
    const drafts = run([
      sdk(1, { type: "system", subtype: "init", permissionMode: "plan", model: "m", session_id: "s" }),
      sdk(2, { type: "system", subtype: "status", status: null, permissionMode: "acceptEdits" }),
      sdk(3, { type: "system", subtype: "status", status: "requesting" }),
      sdk(4, { type: "system", subtype: "status", status: null, permissionMode: "bypassPermissions" })
    ])
    expect(pick(drafts, "mode.changed").map((d) => d.payload)).toEqual([
      { mode: "default", nativeMode: "acceptEdits" },
      { mode: "execute", nativeMode: "bypassPermissions" }
    ])
    expect(["plan", "default", "acceptEdits", "bypassPermissions", "dontAsk", "auto"].map(canonicalMode)).toEqual([
      "plan",
      "default",
      "default",
      "execute",
      "execute",
      "unknown"
    ])
    expect(nativeMode("ask")).toBeUndefined()
  })

  it("streams text and thinking deltas into the item the finished block completes", () => {
    const stream = (event: unknown): ClaudeLine => sdk(1, { type: "stream_event", event, parent_tool_use_id: null })
    const drafts = run([
      stream({ type: "message_start", message: { id: "m1" } }),
      stream({ type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } }),
      stream({ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "hmm" } }),
      sdk(2, { type: "assistant", message: { id: "m1", content: [{ type: "thinking", thinking: "hmm" }] } }),
      stream({ type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }),
      stream({ type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Hi" } }),
      sdk(3, { type: "assistant", message: { id: "m1", content: [{ type: "text", text: "Hi" }] } }),
      stream({ type: "message_delta", delta: { stop_reason: "end_turn" } })
    ])
    expect(pick(drafts, "content.delta").map((d) => [d.itemId, d.payload.streamKind, d.payload.delta])).toEqual([
      ["m1:0", "reasoning_text", "hmm"],
      ["m1:1", "assistant_text", "Hi"]
    ])
    expect(
      pick(drafts, "item.completed")
        .slice(1)
        .map((d) => [d.itemId, d.payload.itemType, d.payload.text])
    ).toEqual([
      ["m1:0", "reasoning", "hmm"],
      ["m1:1", "assistant_message", "Hi"]
    ])
    expect(types(drafts)).not.toContain("runtime.warning")
  })
})

describe("checklists", () => {
  it("TaskList replaces the list but keeps known activeForms; failed calls change nothing", () => {
    const tasks = [{ id: "1", subject: "A", status: "pending" as const, activeForm: "Doing A" }]
    expect(
      applyChecklistResult(
        tasks,
        "TaskList",
        {},
        {
          tasks: [
            { id: "1", subject: "A", status: "completed", blockedBy: [] },
            { id: "2", subject: "B", status: "pending", blockedBy: [] }
          ]
        },
        false
      )
    ).toEqual({
      kind: "tasks",
      tasks: [
        { id: "1", subject: "A", status: "completed", activeForm: "Doing A" },
        { id: "2", subject: "B", status: "pending" }
      ]
    })
    expect(applyChecklistResult(tasks, "TaskUpdate", { taskId: "1", status: "completed" }, "error", true)).toEqual({
      kind: "unchanged"
    })
    expect(applyChecklistResult(tasks, "TaskCreate", {}, { nope: 1 }, false)).toMatchObject({ kind: "malformed" })
  })
})

describe("the configuration a user-mode session inherited", () => {
  const init = (servers: ReadonlyArray<{ name: string; status: string; source?: string }>): ClaudeLine =>
    sdk(5, {
      type: "system",
      subtype: "init",
      permissionMode: "plan",
      model: "claude-sonnet-4-5",
      session_id: "s",
      mcp_servers: servers
    })
  const layersOf = (drafts: ReadonlyArray<EventDraft>) =>
    drafts.flatMap((d) => (d.type === "session.configured" ? [d.payload.configLayers] : []))

  it("names the setting sources at start, then once the MCP servers system/init reported, under their scope", () => {
    const map = makeMapping("t" as ThreadId)
    const sources = ["user", "project", "local"]
    expect(layersOf(map(local(0, { ...startMsg, settingSources: sources })))).toEqual([
      [{ name: "user" }, { name: "project" }, { name: "local" }]
    ])
    const servers = [
      { name: "docs", status: "failed", source: "user" },
      { name: "repo-tools", status: "connected", source: "project" },
      { name: "from-plugin", status: "connected", source: "plugin" }
    ]
    expect(layersOf(map(init(servers)))).toEqual([
      [
        { name: "user", mcpServers: ["docs"] },
        { name: "project", mcpServers: ["repo-tools"] },
        { name: "local" },
        { name: "plugin", mcpServers: ["from-plugin"] }
      ]
    ])
    // A later system/init (one per turn) says nothing new.
    expect(layersOf(map(init(servers)))).toEqual([])
  })

  it("an isolated session (no setting sources, as every recorded fixture) names no layers", () => {
    const map = makeMapping("t" as ThreadId)
    expect(layersOf(map(start))).toEqual([undefined])
    expect(layersOf(map(init([{ name: "docs", status: "failed", source: "user" }])))).toEqual([])
  })
})

describe("unanswered questions: marked only where the CLI advertises it", () => {
  const prompt = promptFromAskUserQuestion("p" as PromptId, {
    questions: [
      {
        question: "A?",
        header: "A",
        options: [
          { label: "x", description: "" },
          { label: "y", description: "" }
        ]
      },
      {
        question: "B?",
        header: "B",
        options: [
          { label: "x", description: "" },
          { label: "y", description: "" }
        ]
      }
    ]
  })
  const partial = checkAnswer(prompt, {
    promptId: prompt.promptId,
    answers: [{ questionId: "q0" as QuestionId, selectedOptionIds: ["q0.o1" as OptionId] }]
  })
  if (!partial.ok) throw partial.error

  it("without ask_user_question_unanswered_v1: as before (no annotations; a dismissal allows without answers)", () => {
    expect(answerDecision(prompt, partial.checked, false).native).toEqual({
      behavior: "allow",
      patch: { answers: { "A?": "y" } }
    })
    expect(dismissDecision("empty", undefined).native).toEqual({ behavior: "allow", patch: {} })
    expect(dismissDecision("cancelled", { prompt }).native.behavior).toBe("deny")
  })

  it("with it: a left-out question skipped, a dismissed card's questions dismissed with [No preference]", () => {
    expect(answerDecision(prompt, partial.checked, true).native).toEqual({
      behavior: "allow",
      patch: { answers: { "A?": "y" }, annotations: { "B?": { unanswered: "skipped" } } }
    })
    const dismissed = dismissDecision("empty", { prompt }).native
    expect(dismissed).toEqual({
      behavior: "allow",
      patch: {
        answers: { "A?": "[No preference]", "B?": "[No preference]" },
        annotations: { "A?": { unanswered: "dismissed" }, "B?": { unanswered: "dismissed" } }
      }
    })
    // Read back (a transcript without decision lines), a marked question is no answer.
    expect(
      entriesFromNativeAnswers(
        prompt,
        { "A?": "[No preference]", "B?": "[No preference]" },
        { "A?": { unanswered: "dismissed" }, "B?": { unanswered: "dismissed" } }
      )
    ).toEqual([])
  })
})

describe("URL-mode elicitation: pending after it was opened, until Claude Code says it completed", () => {
  const key = "elicitation:r1"
  const asked = local(5, {
    kind: "elicitation",
    key,
    request: { serverName: "s", message: "Log in", mode: "url", url: "https://x.test/", elicitationId: "e1" }
  })
  const opened = local(6, {
    kind: "decision",
    toolUseID: key,
    decision: {
      kind: "prompt",
      resolution: "answered",
      answers: [{ questionId: "open_url" as QuestionId, selectedOptionIds: ["open" as OptionId] }]
    }
  })
  const complete = sdk(7, {
    type: "system",
    subtype: "elicitation_complete",
    mcp_server_name: "s",
    elicitation_id: "e1"
  })
  const exit = local(8, { kind: "exit", exitKind: "graceful", exitCode: 0, signal: null })

  it("opening answers the request; the completion resolves the prompt answered, once", () => {
    const drafts = run([asked, opened, complete, complete])
    expect(pick(drafts, "request.resolved").map((d) => [d.payload.resolution, d.raw?.method])).toEqual([
      ["responded", "decision"]
    ])
    expect(pick(drafts, "user-input.resolved").map((d) => [d.payload.resolution, d.raw?.method])).toEqual([
      ["answered", "system/elicitation_complete"]
    ])
  })

  it("an exit before the completion resolves the prompt provider_exited, the request not twice", () => {
    const drafts = run([asked, opened, exit])
    expect(pick(drafts, "request.resolved").map((d) => d.payload.resolution)).toEqual(["responded"])
    expect(pick(drafts, "user-input.resolved").map((d) => d.payload.resolution)).toEqual(["provider_exited"])
  })
})
