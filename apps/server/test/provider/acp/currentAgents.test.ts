import { OptionId, PlanId } from "@planbridge/contracts"
import { describe, expect, it } from "vitest"
import { planReply } from "../../../src/provider/acp/AcpRequestAnswer.ts"
import type { PermissionPending } from "../../../src/provider/acp/AcpRequestOpen.ts"
import { claudeAcpProfile } from "../../../src/provider/acp/profiles/claudeAcp.ts"
import { codexAcpProfile } from "../../../src/provider/acp/profiles/codexAcp.ts"
import { AdapterError } from "../../../src/provider/ProviderAdapter.ts"
import { makeStepper } from "./stepper.ts"

/**
 * The pure mapping for the current ACP agents, on the wire codex-acp 2.6.0 and claude-agent-acp
 * 0.101.0 were observed to send: the profile chosen by `agentInfo.name`, plan mode as a config
 * option, `plan_update`, and the plan review's own options.
 */
const select = (id: string, current: string, values: ReadonlyArray<string>, category = id) => ({
  id,
  category,
  type: "select",
  currentValue: current,
  options: values.map((value) => ({ value, name: value }))
})
const PRESETS = ["read-only", "workspace-write", "agent", "agent-full-access"]
const codexOptions = (preset: string, collaboration: string) => [
  select("mode", preset, PRESETS),
  select("collaboration_mode", collaboration, ["default", "plan"]),
  select("model", "gpt-5.4", ["gpt-5.4"])
]
const codexSession = (agentName = "@agentclientprotocol/codex-acp") => {
  const t = makeStepper(codexAcpProfile())
  const init = { protocolVersion: 1, agentCapabilities: { loadSession: true }, agentInfo: { name: agentName } }
  const drafts = t.configure(
    init,
    {
      sessionId: "s1",
      modes: { currentModeId: "agent", availableModes: PRESETS.map((id) => ({ id })) },
      configOptions: codexOptions("agent", "default")
    },
    { cwd: "/w", resumed: false }
  )
  return { t, drafts }
}
const update = (body: Record<string, unknown>) => ({ sessionId: "s1", update: body })
const PLAN = "# Plan\n\n1. Do it.\n"

describe("codex-acp 2.6: plan mode is the collaboration_mode config option", () => {
  it("starts in its agent preset as default, plan mode offered; session.start default switches nothing", () => {
    const { t, drafts } = codexSession()
    const configured = drafts.find((d) => d.type === "session.configured")
    expect(configured?.payload).toMatchObject({
      mode: "default",
      nativeMode: "agent",
      capabilities: { supportsPlanMode: true, supportsModeSwitching: true }
    })
    expect(t.modeRequests("default")).toEqual([])
  })

  it("plan turns the option on, and leaving it turns it off before switching the preset", () => {
    const { t } = codexSession()
    expect(t.modeRequests("plan")).toEqual([
      {
        method: "session/set_config_option",
        params: { sessionId: "s1", configId: "collaboration_mode", value: "plan" },
        nativeMode: "plan"
      }
    ])
    const changed = t.call(
      "session/set_config_option",
      { sessionId: "s1", configId: "collaboration_mode", value: "plan" },
      { configOptions: codexOptions("agent", "plan") }
    )
    expect(changed.map((d) => [d.type, d.payload])).toEqual([["mode.changed", { mode: "plan", nativeMode: "plan" }]])
    expect(t.mode).toBe("plan")
    expect(t.modeRequests("default")?.map((r) => r.params)).toEqual([
      { sessionId: "s1", configId: "collaboration_mode", value: "default" }
    ])
    expect(t.modeRequests("execute")?.map((r) => [r.method, r.nativeMode])).toEqual([
      ["session/set_config_option", "default"],
      ["session/set_mode", "agent-full-access"]
    ])
    // The agent leaving plan mode itself (an approved plan) is read from its echo.
    const echoed = t.notification(
      "session/update",
      update({ sessionUpdate: "config_option_update", configOptions: codexOptions("agent", "default") })
    ).drafts
    expect(echoed.map((d) => d.payload)).toEqual([{ mode: "default", nativeMode: "agent" }])
  })

  it("Zed's codex-acp 0.16 (agentInfo.name codex-acp) keeps its own presets, and no plan option", () => {
    const { t, drafts } = codexSession("codex-acp")
    expect(drafts.find((d) => d.type === "session.configured")?.payload).toMatchObject({
      mode: "unknown",
      capabilities: { supportsPlanMode: false }
    })
    expect(t.modeRequests("plan")).toBeUndefined()
  })

  it("plan_update markdown is the proposed plan; its review takes the plan's id and proposes nothing again", () => {
    const { t } = codexSession()
    const turnId = t.startTurn()
    const proposed = t.notification(
      "session/update",
      update({ sessionUpdate: "plan_update", plan: { type: "markdown", planId: "n-plan", content: PLAN } })
    ).drafts
    expect(proposed.map((d) => [d.type, d.turnId, d.payload])).toEqual([
      ["plan.proposed.completed", turnId, { planId: "p:plan:1:n-plan", markdown: PLAN }]
    ])
    const review = t.request(0, "session/request_permission", {
      sessionId: "s1",
      toolCall: {
        toolCallId: "plan-review:n-plan",
        kind: "switch_mode",
        title: "Implement this plan?",
        rawInput: { plan: PLAN }
      },
      options: [
        { optionId: "implement_plan", name: "Yes, implement this plan", kind: "allow_once" },
        { optionId: "revise_plan", name: "No, and tell Codex what to do differently", kind: "reject_once" }
      ]
    })
    expect(review.drafts.map((d) => d.type)).toEqual(["request.opened", "session.state.changed"])
    expect(review.drafts[0]?.payload).toMatchObject({ requestKind: "plan_approval", planId: "p:plan:1:n-plan" })
    // The same plan again (claude-agent-acp sends an approved plan back) proposes nothing.
    const again = t.notification(
      "session/update",
      update({ sessionUpdate: "plan_update", plan: { type: "markdown", planId: "n-plan", content: PLAN } })
    ).drafts
    expect(again).toEqual([])
    const items = t.notification(
      "session/update",
      update({
        sessionUpdate: "plan_update",
        plan: { type: "items", planId: "c", entries: [{ content: "Step", status: "pending", priority: "low" }] }
      })
    ).drafts
    expect(items.map((d) => d.type)).toEqual(["capabilities.changed", "turn.plan.updated"])
  })
})

describe("ACP extension notifications", () => {
  it("an unknown _-prefixed one (_auth/status_update) is ignored; an unknown other one is reported", () => {
    const { t } = codexSession()
    const status = { authStatus: { kind: "gateway", label: "Custom model gateway" } }
    expect(t.notification("_auth/status_update", status).drafts).toEqual([])
    expect(t.notification("auth/status_update", status).drafts.map((d) => d.payload)).toMatchObject([
      { code: "unknown_notification" }
    ])
  })
})

describe("claude-agent-acp 0.101", () => {
  it("reads auto as default; Zed's 0.23 (announced by name) does not know it", () => {
    const configured = (agentName: string) => {
      const t = makeStepper(claudeAcpProfile())
      const init = { protocolVersion: 1, agentInfo: { name: agentName } }
      const ids = ["default", "acceptEdits", "plan", "auto", "bypassPermissions"]
      const setup = { sessionId: "s1", modes: { currentModeId: "auto", availableModes: ids.map((id) => ({ id })) } }
      return t.configure(init, setup, { cwd: "/w", resumed: false }).find((d) => d.type === "session.configured")
    }
    expect(configured("@agentclientprotocol/claude-agent-acp")?.payload).toMatchObject({
      mode: "default",
      nativeMode: "auto",
      capabilities: { supportsStructuredUserInput: true, supportsPlanOptions: true }
    })
    expect(configured("@zed-industries/claude-agent-acp")?.payload).toMatchObject({
      mode: "unknown",
      capabilities: { supportsStructuredUserInput: false }
    })
  })
})

describe("plan.decide with one of the agent's options", () => {
  const pending: PermissionPending = {
    wire: "permission",
    kind: "plan",
    key: "1",
    nativeId: 1,
    method: "session/request_permission",
    requestId: "r" as never,
    turnId: undefined,
    blocking: false,
    answered: false,
    planId: PlanId.make("plan"),
    options: [
      { optionId: "exit-plan-default", name: "Yes", kind: "allow_once" },
      { optionId: "exit-plan-clear-auto", name: "Yes, clear context", kind: "allow_always" },
      { optionId: "reject", name: "No, keep planning", kind: "reject_once" }
    ]
  }
  const decide = (decision: "approved" | "rejected", optionId?: string) =>
    planReply(
      pending,
      {
        planId: PlanId.make("plan"),
        decision,
        ...(optionId === undefined ? {} : { optionId: OptionId.make(optionId) })
      },
      "agent"
    )
  it("selects the option named, or the first of the decision's kind", () => {
    expect(decide("approved", "exit-plan-clear-auto")).toEqual({
      result: { outcome: { outcome: "selected", optionId: "exit-plan-clear-auto" } }
    })
    expect(decide("approved")).toEqual({ result: { outcome: { outcome: "selected", optionId: "exit-plan-default" } } })
    expect(decide("rejected", "reject")).toEqual({ result: { outcome: { outcome: "selected", optionId: "reject" } } })
  })
  it("refuses an option the request lacks, or one that says the opposite", () => {
    for (const [decision, optionId] of [
      ["approved", "nope"],
      ["approved", "reject"],
      ["rejected", "exit-plan-default"]
    ] as const) {
      const refused = decide(decision, optionId)
      expect(refused).toBeInstanceOf(AdapterError)
      expect((refused as AdapterError).kind).toBe("invalid_answer")
    }
  })
})
