import {
  decodeRuntimeEventSync,
  validateAnswer,
  type OptionId,
  type PromptId,
  type QuestionId,
  type RuntimeEvent,
  type ThreadId
} from "@planbridge/contracts"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { step } from "../../../src/provider/codex/CodexMapping.ts"
import { messageLine, type CodexLine } from "../../../src/provider/codex/CodexLine.ts"
import {
  initialMappingState,
  type CodexMappingState,
  type OutgoingMessage
} from "../../../src/provider/codex/CodexMappingState.ts"
import { entriesFromNativeAnswer, nativeAnswer, promptFromRequest } from "../../../src/provider/codex/CodexPrompts.ts"
import { stampDraft } from "../../../src/provider/kernel/EventDraft.ts"

/**
 * The pure mapping on messages the recorded transcripts do not contain (0.171.0 never lets the
 * model mark a question secret, approvals need a sandbox escalation, …), shaped exactly as the
 * generated protocol types declare them.
 */

const THREAD = "thread-unit" as ThreadId
const TURN = "turn-1"

const run = (inputs: ReadonlyArray<CodexLine>, state: CodexMappingState = initialMappingState(THREAD, "plan")) => {
  let counter = 0
  const ctx = { nextEventId: () => `e${counter++}` }
  const envelope = { provider: "codex", threadId: THREAD, createdAt: "2026-11-30T00:00:00.000Z" } as const
  const events: Array<RuntimeEvent> = []
  const replies: Array<OutgoingMessage> = []
  for (const input of inputs) {
    const result = step(state, input)
    state = result.state
    events.push(...result.drafts.map((draft) => stampDraft(draft, { ...envelope, eventId: ctx.nextEventId() })))
    replies.push(...result.replies)
  }
  for (const event of events) decodeRuntimeEventSync(event)
  return { state, events, replies }
}
const s2c = (msg: unknown): CodexLine => messageLine("in", msg)
const c2s = (msg: unknown): CodexLine => messageLine("out", msg)
const ofType = <T extends RuntimeEvent["type"]>(events: ReadonlyArray<RuntimeEvent>, type: T) =>
  events.filter((e): e is Extract<RuntimeEvent, { readonly type: T }> => e.type === type)

const secretRequest = {
  id: 7,
  method: "item/tool/requestUserInput",
  params: {
    threadId: "native",
    turnId: TURN,
    itemId: "call_secret",
    questions: [
      {
        id: "token",
        header: "Token",
        question: "Paste the deploy token",
        isOther: true,
        isSecret: true,
        options: null
      },
      {
        id: "env",
        header: "Env",
        question: "Which environment?",
        isOther: false,
        isSecret: false,
        options: [{ label: "staging", description: "s" }]
      }
    ]
  }
}

/** A question as 0.171.0 sends every one: `isOther` forced on by the tool, not secret. */
const question = (id: string, options: ReadonlyArray<{ label: string; description: string }>) => ({
  id,
  header: id,
  question: `${id}?`,
  isOther: true,
  isSecret: false,
  options
})

describe("Codex mapping (pure)", () => {
  it("a secret answer never appears in clear in any event, raw payloads included", () => {
    const opened = run([s2c(secretRequest)])
    const prompt = ofType(opened.events, "user-input.requested")[0]!.payload.prompt
    expect(prompt.blocking).toBe(true) // isBlocking absent means blocking
    expect(prompt.questions.map((q) => [q.id, q.secret, q.allowFreeform, q.options.length])).toEqual([
      ["token", true, true, 0],
      ["env", false, false, 1]
    ])
    const checked = validateAnswer(prompt, {
      promptId: prompt.promptId,
      answers: [
        { questionId: "token" as QuestionId, text: "s3cr3t-value" },
        { questionId: "env" as QuestionId, selectedOptionIds: ["opt-0" as OptionId] }
      ]
    })
    if (!checked.ok) throw checked.error
    const result = nativeAnswer(prompt, checked.entries)
    expect(result).toEqual({
      answers: { token: { answers: ["user_note: s3cr3t-value"] }, env: { answers: ["staging"] } }
    })
    const answered = run([c2s({ id: 7, result })], opened.state)
    expect(JSON.stringify(answered.events)).not.toContain("s3cr3t")
    expect(ofType(answered.events, "user-input.resolved").map((e) => e.payload)).toEqual([
      {
        promptId: prompt.promptId,
        resolution: "answered",
        answers: [
          { questionId: "token", redacted: true },
          { questionId: "env", selectedOptionIds: ["opt-0"] }
        ]
      }
    ])
    expect(answered.events[0]?.raw?.payload).toEqual({
      id: 7,
      result: { answers: { token: { answers: ["[redacted]"] }, env: { answers: ["staging"] } } }
    })
  })

  it("free text goes as Codex's TUI sends it: after 'None of the above' if isOther, alone without options", () => {
    const opened = run([
      s2c({
        ...secretRequest,
        params: {
          ...secretRequest.params,
          questions: [
            { id: "token", header: "Token", question: "Paste the token", isOther: true, isSecret: true, options: null },
            { ...question("pin", [{ label: "none", description: "n" }]), isSecret: true },
            question("env", [{ label: "staging", description: "s" }])
          ]
        }
      })
    ])
    const prompt = ofType(opened.events, "user-input.requested")[0]!.payload.prompt
    const answers = [
      { questionId: "token" as QuestionId, text: "tok-123" },
      { questionId: "pin" as QuestionId, text: "4711" },
      { questionId: "env" as QuestionId, selectedOptionIds: ["opt-0" as OptionId], text: "eu only" }
    ]
    const checked = validateAnswer(prompt, { promptId: prompt.promptId, answers })
    if (!checked.ok) throw checked.error
    const result = nativeAnswer(prompt, checked.entries)
    expect(result).toEqual({
      answers: {
        token: { answers: ["user_note: tok-123"] },
        pin: { answers: ["None of the above", "user_note: 4711"] },
        env: { answers: ["staging", "user_note: eu only"] }
      }
    })
    expect(entriesFromNativeAnswer(prompt, result)).toEqual(answers)
    // Secret answers stay out of every event, whatever their shape on the wire.
    const answered = run([c2s({ id: 7, result })], opened.state)
    expect(JSON.stringify(answered.events)).not.toMatch(/tok-123|4711/u)
  })

  it("command approvals: options from the native decision set, the chosen one resolved", () => {
    const amendment = { acceptWithExecpolicyAmendment: { execpolicy_amendment: ["npm", "test"] } }
    const { events, state } = run([
      s2c({
        id: "req-1",
        method: "item/commandExecution/requestApproval",
        params: {
          kind: "command",
          threadId: "native",
          turnId: TURN,
          itemId: "exec-1",
          startedAtMs: 1,
          environmentId: null,
          command: "npm test",
          reason: "needs network",
          availableDecisions: ["accept", amendment, "decline", "cancel"]
        }
      })
    ])
    const opened = ofType(events, "request.opened")[0]!
    expect(opened.payload).toMatchObject({
      requestKind: "approval",
      title: "npm test",
      detail: "needs network",
      native: { method: "item/commandExecution/requestApproval", id: "req-1" }
    })
    expect(opened.payload.options.map((o) => [o.id, o.kind])).toEqual([
      ["accept", "allow_once"],
      ["acceptWithExecpolicyAmendment", "allow_always"],
      ["decline", "reject_once"],
      ["cancel", "other"]
    ])
    expect(state.serverRequests.get("s:req-1")?.choices?.[1]?.decision).toEqual(amendment)
    const after = run(
      [
        c2s({ id: "req-1", result: { decision: amendment } }),
        s2c({ method: "serverRequest/resolved", params: { threadId: "native", requestId: "req-1" } })
      ],
      state
    )
    expect(ofType(after.events, "request.resolved").map((e) => e.payload)).toEqual([
      { requestId: opened.payload.requestId, resolution: "responded", optionId: "acceptWithExecpolicyAmendment" }
    ])
  })

  it("a server request it cannot handle is refused on the wire and reported, never left hanging", () => {
    const { events, replies } = run([
      s2c({ id: 3, method: "item/tool/call", params: {} }),
      // A request it does handle, unreadable: refused with the path of what is wrong.
      s2c({ id: 4, method: "mcpServer/elicitation/request", params: {} })
    ])
    expect(replies).toEqual([
      { id: 3, error: { code: -32601, message: "planbridge does not handle the server request item/tool/call" } },
      { id: 4, error: { code: -32602, message: expect.stringContaining('at ["threadId"]') } }
    ])
    expect(ofType(events, "runtime.warning").map((e) => e.payload.code)).toEqual([
      "codex.unsupported_request",
      "codex.unsupported_request"
    ])
  })

  it("thread status: every native status has a canonical state", () => {
    const status = (s: unknown) => s2c({ method: "thread/status/changed", params: { threadId: "native", status: s } })
    const { events } = run([
      status({ type: "idle" }),
      status({ type: "active", activeFlags: [] }),
      status({ type: "active", activeFlags: ["waitingOnApproval"] }),
      status({ type: "systemError" }),
      status({ type: "notLoaded" })
    ])
    expect(ofType(events, "session.state.changed").map((e) => [e.payload.state, e.payload.flags])).toEqual([
      ["idle", []],
      ["running", []],
      ["waiting", ["waitingOnApproval"]],
      ["error", []],
      ["stopped", []]
    ])
  })

  it("bad input is reported with its path, unknown notifications once, and nothing crashes", () => {
    const { events } = run([
      s2c({
        method: "turn/plan/updated",
        params: { threadId: "n", turnId: TURN, explanation: null, plan: [{ step: "x", status: "done" }] }
      }),
      s2c({ method: "thread/somethingNew", params: {} }),
      s2c({ method: "thread/somethingNew", params: {} }),
      s2c({ method: "account/rateLimits/updated", params: {} }),
      s2c([1, 2, 3]),
      { dir: "local", msg: { kind: "unreadable", line: "garbage", reason: "Unexpected token" } }
    ])
    expect(ofType(events, "runtime.warning").map((e) => e.payload.code)).toEqual([
      "codex.decode_failed",
      "codex.unhandled_notification",
      "codex.invalid_line",
      "codex.invalid_line"
    ])
    expect(ofType(events, "runtime.warning")[0]?.payload.message).toContain('["plan"][0]["status"]')
  })

  it("turn/completed merges status and keeps collected items; ending the turn cancels its open prompt", () => {
    const item = { type: "agentMessage", id: "m1", text: "hello" }
    const { events } = run([
      s2c({ method: "item/completed", params: { threadId: "n", turnId: TURN, item, completedAtMs: 2 } }),
      s2c(secretRequest),
      s2c({
        method: "turn/completed",
        params: {
          threadId: "n",
          turn: {
            id: TURN,
            items: [],
            itemsView: "notLoaded",
            status: "failed",
            error: { message: "model error" },
            startedAt: 1,
            completedAt: 2,
            durationMs: 1000
          }
        }
      })
    ])
    expect(events.map((e) => e.type)).toEqual([
      "item.completed",
      "request.opened",
      "user-input.requested",
      "user-input.resolved",
      "request.resolved",
      "turn.completed"
    ])
    expect(ofType(events, "turn.completed")[0]?.payload).toEqual({
      status: "failed",
      error: { message: "model error" },
      durationMs: 1000
    })
    expect(ofType(events, "user-input.resolved")[0]?.payload).toMatchObject({
      resolution: "cancelled",
      reason: "turn failed"
    })
  })

  it("native answers and canonical entries round-trip", () => {
    // "None of the above" is drawn often: a model's own option of that name must still round-trip.
    const anyLabel = fc.string({ minLength: 1 }).filter((s) => !s.startsWith("user_note: "))
    const label = fc.oneof(fc.constant("None of the above"), anyLabel)
    const labels = fc.uniqueArray(label, { minLength: 1, maxLength: 4 })
    const text = fc.string({ minLength: 1 })
    // Either an option (with or without a note) or free text alone.
    const answer = fc.oneof(
      fc.record({ pick: fc.nat(), note: fc.option(text, { nil: undefined }) }),
      fc.record({ pick: fc.constant(undefined), note: text })
    )
    fc.assert(
      fc.property(labels, answer, (optionLabels, { pick, note }) => {
        const prompt = promptFromRequest(
          {
            threadId: "n",
            turnId: TURN,
            itemId: "c",
            questions: [
              {
                id: "q",
                header: "h",
                question: "?",
                isOther: true,
                isSecret: false,
                options: optionLabels.map((label) => ({ label, description: "" }))
              }
            ]
          },
          "p" as PromptId
        )
        const option = pick === undefined ? undefined : prompt.questions[0].options[pick % optionLabels.length]!
        const entry = {
          questionId: "q" as QuestionId,
          ...(option !== undefined ? { selectedOptionIds: [option.id] } : {}),
          ...(note !== undefined ? { text: note } : {})
        }
        const checked = validateAnswer(prompt, { promptId: prompt.promptId, answers: [entry] })
        if (!checked.ok) throw checked.error
        expect(entriesFromNativeAnswer(prompt, nativeAnswer(prompt, checked.entries))).toEqual([entry])
      })
    )
  })
})
