import { describe, expect, it } from "vitest"
import type { EventDraft } from "../../../src/provider/kernel/EventDraft.ts"
import { canonicalMode, profileForAgent } from "../../../src/provider/acp/AcpProfile.ts"
import { claudeAcpProfile } from "../../../src/provider/acp/profiles/claudeAcp.ts"
import { codexAcpProfile } from "../../../src/provider/acp/profiles/codexAcp.ts"
import { cursorProfile } from "../../../src/provider/acp/profiles/cursor.ts"
import { makeStepper, type Stepper } from "./stepper.ts"

const init = {
  protocolVersion: 1,
  agentCapabilities: { loadSession: true },
  agentInfo: { name: "x", version: "1.2.3" }
}
const modes = (current: string, ids: ReadonlyArray<string>) => ({
  currentModeId: current,
  availableModes: ids.map((id) => ({ id, name: id }))
})
const update = (body: Record<string, unknown>) => ({ sessionId: "s1", update: body })
const types = (drafts: ReadonlyArray<EventDraft>) => drafts.map((d) => d.type)
const note = (t: Stepper, method: string, params: unknown) => t.notification(method, params).drafts

const started = (profile = cursorProfile()) => {
  const t = makeStepper(profile)
  t.configure(init, { sessionId: "s1", modes: modes("agent", ["agent", "plan", "ask"]) }, { cwd: "/w", resumed: false })
  return t
}
const inTurn = (profile = cursorProfile()) => {
  const t = started(profile)
  const turnId = t.startTurn()
  return { t, turnId }
}

describe("mode mapping through profiles (exact ids, never substrings)", () => {
  it("maps each agent's documented modes and everything else to unknown", () => {
    const cursor = cursorProfile()
    expect(["agent", "plan", "ask", "Plan", "planner", ""].map((id) => canonicalMode(cursor, id))).toEqual([
      "default",
      "plan",
      "ask",
      "unknown",
      "unknown",
      "unknown"
    ])
    const claude = claudeAcpProfile()
    expect(
      ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "plan-mode"].map((id) =>
        canonicalMode(claude, id)
      )
    ).toEqual(["default", "default", "plan", "execute", "execute", "unknown"])
    // Zed's codex-acp 0.16 (announced as `codex-acp`), then @agentclientprotocol/codex-acp 2.6.
    const zedCodex = profileForAgent(codexAcpProfile(), "codex-acp")
    expect(
      ["read-only", "auto", "full-access", "toString", "constructor"].map((id) => canonicalMode(zedCodex, id))
    ).toEqual(["default", "default", "execute", "unknown", "unknown"])
    expect(
      ["read-only", "workspace-write", "agent", "agent-full-access", "auto"].map((id) =>
        canonicalMode(codexAcpProfile(), id)
      )
    ).toEqual(["default", "default", "default", "execute", "unknown"])
    expect(canonicalMode(claudeAcpProfile(), "auto")).toBe("default")
    expect(canonicalMode(profileForAgent(claudeAcpProfile(), "@zed-industries/claude-agent-acp"), "auto")).toBe(
      "unknown"
    )
  })

  it("claude-agent-acp: bypassPermissions and dontAsk are read as execute but never switched to", () => {
    // Bypass is disabled in every session (plan mode otherwise runs every tool unasked), and
    // dontAsk denies what is not pre-approved: neither is `execute`, so none is offered.
    const t = makeStepper(claudeAcpProfile())
    const all = ["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"]
    const drafts = t.configure(init, { sessionId: "s1", modes: modes("default", all) }, { cwd: "/w", resumed: false })
    expect(drafts.find((d) => d.type === "session.configured")?.payload).toMatchObject({
      capabilities: { supportsPlanMode: true, supportsModeSwitching: true }
    })
    expect(t.modeRequest("execute")).toBeUndefined()
    expect(t.modeRequest("plan")?.nativeMode).toBe("plan")
    expect(
      note(t, "session/update", update({ sessionUpdate: "current_mode_update", currentModeId: "dontAsk" }))
    ).toMatchObject([{ type: "mode.changed", payload: { mode: "execute", nativeMode: "dontAsk" } }])
  })

  it("dedupes a switch echoed both as current_mode_update and config_option_update", () => {
    const { t } = inTurn(claudeAcpProfile())
    const first = note(t, "session/update", update({ sessionUpdate: "current_mode_update", currentModeId: "weird" }))
    expect(first).toMatchObject([{ type: "mode.changed", payload: { mode: "unknown", nativeMode: "weird" } }])
    const echo = note(
      t,
      "session/update",
      update({
        sessionUpdate: "config_option_update",
        configOptions: [{ id: "mode", category: "mode", currentValue: "weird" }]
      })
    )
    expect(echo).toEqual([])
  })

  it("limits capabilities to the modes the session offers and switches through set_mode", () => {
    const t = makeStepper(cursorProfile())
    const drafts = t.configure(
      init,
      { sessionId: "s1", modes: modes("agent", ["agent", "plan"]) },
      { cwd: "/w", resumed: false }
    )
    expect(drafts.find((d) => d.type === "session.configured")).toMatchObject({
      payload: { capabilities: { supportsPlanMode: true, supportsAskMode: false } }
    })
    expect(t.modeRequest("plan")).toEqual({
      method: "session/set_mode",
      params: { sessionId: "s1", modeId: "plan" },
      nativeMode: "plan"
    })
    expect(t.modeRequest("ask")).toBeUndefined()
  })

  it("uses session/set_config_option when modes exist only as a config option", () => {
    const t = makeStepper(claudeAcpProfile())
    t.configure(
      init,
      {
        sessionId: "s1",
        configOptions: [
          { id: "perm", category: "mode", currentValue: "default", options: [{ value: "default" }, { value: "plan" }] }
        ]
      },
      { cwd: "/w", resumed: false }
    )
    expect(t.modeRequest("plan")).toEqual({
      method: "session/set_config_option",
      params: { sessionId: "s1", configId: "perm", value: "plan" },
      nativeMode: "plan"
    })
  })
})

describe("session updates", () => {
  it("starts an item for a tool_call_update that was never announced, and completes it", () => {
    const { t, turnId } = inTurn()
    const drafts = note(
      t,
      "session/update",
      update({ sessionUpdate: "tool_call_update", toolCallId: "c1", status: "completed", kind: "read" })
    )
    expect(drafts.map((d) => [d.type, "itemId" in d ? d.itemId : undefined])).toEqual([
      ["item.started", `${turnId}:tool:c1`],
      ["item.completed", `${turnId}:tool:c1`]
    ])
  })

  it("keeps priority, maps in_progress, reports an unknown step status instead of guessing", () => {
    const { t } = inTurn()
    const drafts = note(
      t,
      "session/update",
      update({
        sessionUpdate: "plan",
        entries: [
          { content: "a", priority: "high", status: "in_progress" },
          { content: "b", priority: "urgent", status: "blocked" }
        ]
      })
    )
    expect(types(drafts)).toEqual(["capabilities.changed", "runtime.warning", "turn.plan.updated"])
    expect(drafts.at(-1)).toMatchObject({
      payload: {
        plan: {
          source: "native",
          steps: [
            { step: "a", status: "inProgress", priority: "high" },
            { step: "b", status: "pending" }
          ]
        }
      }
    })
    const again = note(t, "session/update", update({ sessionUpdate: "plan", entries: [] }))
    expect(types(again)).toEqual(["turn.plan.updated"])
  })

  it("turns undecodable or unknown input into warnings that carry the raw payload", () => {
    const { t } = inTurn()
    const bad = note(t, "session/update", { sessionId: "s1", update: { sessionUpdate: "plan", entries: "nope" } })
    expect(bad).toMatchObject([
      {
        type: "runtime.warning",
        payload: { code: "update_invalid" },
        raw: { source: "acp.notification", method: "session/update" }
      }
    ])
    expect(note(t, "session/update", update({ sessionUpdate: "telepathy" }))).toMatchObject([
      { payload: { code: "unknown_update" } }
    ])
    expect(note(t, "x/y", { a: 1 })).toMatchObject([
      { payload: { code: "unknown_notification", detail: { method: "x/y", params: { a: 1 } } } }
    ])
    expect(
      note(t, "session/update", update({ sessionUpdate: "agent_message_chunk", content: { type: "image", data: "…" } }))
    ).toMatchObject([{ payload: { code: "unsupported_content" } }])
  })

  it("reports chunks outside a turn, and counts history replayed before session/load answered", () => {
    const t = started()
    expect(
      note(t, "session/update", update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } }))
    ).toMatchObject([{ payload: { code: "outside_turn" } }])
    const loading = makeStepper(cursorProfile())
    note(
      loading,
      "session/update",
      update({ sessionUpdate: "user_message_chunk", content: { type: "text", text: "old" } })
    )
    note(
      loading,
      "session/update",
      update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "old" } })
    )
    const drafts = loading.configure(
      init,
      { modes: modes("agent", ["agent"]), sessionId: "s1" },
      { cwd: "/w", resumed: true }
    )
    expect(drafts.find((d) => d.type === "runtime.warning")).toMatchObject({
      payload: { code: "history_not_mapped", message: expect.stringContaining("2 history") }
    })
    expect(drafts.find((d) => d.type === "session.started")).toMatchObject({
      payload: { resumed: true, nativeSessionId: "s1", providerVersion: "1.2.3" }
    })
  })

  it("merges cursor/update_todos notifications by id and replaces without merge", () => {
    const { t } = inTurn()
    note(t, "cursor/update_todos", {
      merge: false,
      todos: [
        { id: "a", content: "A", status: "pending" },
        { id: "b", content: "B", status: "pending" }
      ]
    })
    const merged = note(t, "cursor/update_todos", {
      merge: true,
      todos: [
        { id: "b", status: "cancelled" },
        { id: "c", content: "C" }
      ]
    })
    expect(merged.at(-1)).toMatchObject({
      payload: {
        plan: {
          steps: [
            { id: "a", status: "pending" },
            { id: "b", step: "B", status: "cancelled" },
            { id: "c", step: "C", status: "pending" }
          ]
        }
      }
    })
    const replaced = note(t, "cursor/update_todos", {
      merge: false,
      todos: [{ id: "z", content: "Z", status: "completed" }]
    })
    expect(replaced.at(-1)).toMatchObject({
      payload: { plan: { steps: [{ id: "z", step: "Z", status: "completed" }] } }
    })
  })
})

describe("agent requests", () => {
  it("answers malformed requests at once, with a warning, instead of stalling the agent", () => {
    const { t } = inTurn()
    const permission = t.request(7, "session/request_permission", { sessionId: "s1", options: [] })
    expect(permission.reply).toMatchObject({ error: { code: -32602 } })
    expect(permission.drafts).toMatchObject([{ type: "runtime.warning", payload: { code: "request_invalid" } }])
    const question = t.request(8, "cursor/ask_question", { questions: [{ id: "q", prompt: "?", options: [] }] })
    expect(question.reply).toEqual({
      result: { outcome: { outcome: "skipped", reason: "the question could not be displayed" } }
    })
    const unknown = t.request(9, "cursor/teleport", { to: "mars" })
    expect(unknown.reply).toMatchObject({ error: { code: -32601 } })
    expect(t.pending()).toEqual([])
  })

  it("resolves what is still pending when the prompt returns (cancelled) or the agent exits (provider_exited)", () => {
    const { t, turnId } = inTurn()
    t.request(1, "session/request_permission", {
      sessionId: "s1",
      toolCall: { toolCallId: "never-announced" },
      options: [{ optionId: "ok", name: "OK", kind: "allow_once" }]
    })
    const finished = t.promptFinished({ result: { stopReason: "end_turn" } })
    expect(finished.replies).toEqual([{ id: 1, reply: { result: { outcome: { outcome: "cancelled" } } } }])
    expect(types(finished.drafts)).toEqual(["request.resolved", "turn.completed", "session.state.changed"])
    expect(finished.drafts[0]).toMatchObject({ turnId, payload: { resolution: "cancelled" } })

    t.startTurn()
    t.request(2, "cursor/ask_question", { questions: [{ id: "q", prompt: "?", options: [{ id: "a", label: "A" }] }] })
    const exited = t.exited({ exitKind: "crashed", exitCode: 1, signal: null })
    expect(types(exited)).toEqual([
      "user-input.resolved",
      "request.resolved",
      "turn.completed",
      "session.exited",
      "session.state.changed"
    ])
    expect(exited[0]).toMatchObject({ payload: { resolution: "provider_exited" } })
    expect(exited[2]).toMatchObject({ payload: { status: "failed" } })
  })

  it("resolves a request the agent withdrew with $/cancel_request and owes it a -32800 error", () => {
    const { t } = inTurn()
    t.request("r1", "cursor/ask_question", {
      questions: [{ id: "q", prompt: "?", options: [{ id: "a", label: "A" }] }]
    })
    const withdrawn = t.notification("$/cancel_request", { requestId: "r1" })
    expect(types(withdrawn.drafts)).toEqual(["user-input.resolved", "request.resolved", "session.state.changed"])
    expect(withdrawn.drafts[0]).toMatchObject({ payload: { resolution: "cancelled" } })
    expect(withdrawn.replies).toEqual([{ id: "r1", reply: { error: { code: -32800, message: "Request cancelled" } } }])
    expect(t.notification("$/cancel_request", { requestId: "r1" })).toEqual({ drafts: [], replies: [] })
  })

  it("maps stop reasons and usage", () => {
    const { t } = inTurn()
    const done = t.promptFinished({
      result: {
        stopReason: "cancelled",
        usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7, cachedReadTokens: 1 }
      }
    })
    expect(done.drafts.find((d) => d.type === "turn.completed")).toMatchObject({
      payload: {
        status: "interrupted",
        usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7, cachedInputTokens: 1 }
      }
    })
  })
})
