import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { ServerFrame } from "@planbridge/contracts"
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest"
import { DEMO_COMMAND_FILE, DEMO_PLAN_MARKDOWN } from "../../src/demo/scenarios.ts"
import { startDemoRig, STEP_MS, type DemoRig } from "./demoRig.ts"

/**
 * Demo mode with the real ACP agents (@agentclientprotocol codex-acp 2.6.0 and claude-agent-acp 0.101.0, installed
 * as dependencies): the scenarios their capabilities allow, end to end over WebSocket.
 */
let rig: DemoRig
beforeAll(async () => {
  rig = await startDemoRig()
})
afterAll(async () => {
  await rig?.close()
})

const statuses = (rig: DemoRig, threadId: string) =>
  rig
    .events(threadId)
    .flatMap((f) => (f.event.type === "turn.plan.updated" ? [f.event.payload.plan.steps.map((s) => s.status)] : []))

/** Approves the turn's approval request with the agent's first allow option; returns its option id. */
const approveFirst = async (rig: DemoRig, threadId: string, kind: string) => {
  const opened = await rig.waitFor("request.opened", threadId)
  if (opened.event.type !== "request.opened") throw new Error("unreachable")
  expect(opened.event.payload.requestKind).toBe(kind)
  const allow = opened.event.payload.options.find((o) => o.kind === "allow_once")
  expect(allow).toBeDefined()
  await rig.ok({
    type: "request.respond",
    requestId: opened.event.payload.requestId,
    optionId: allow!.id,
    clientRequestId: `demo-acp-${threadId}`
  })
  return opened.event.payload
}

describe("demo mode, ACP agents", () => {
  it("both agents are offered, labelled as demos", () => {
    const welcome = rig.client.frames.find((f) => f.type === "welcome")
    if (welcome?.type !== "welcome") throw new Error("no welcome")
    expect(welcome.providers.map((p) => [p.provider, p.label, p.demo])).toEqual([
      ["codex", "Codex (demo)", true],
      ["claude", "Claude (demo)", true],
      ["acp-codex", "codex-acp (demo)", true],
      ["acp-claude", "claude-agent-acp (demo)", true]
    ])
  })

  it(
    "codex-acp: the checklist updates, and its auto-review preset reviews a command itself",
    async () => {
      const list = await rig.session("acp-codex", "default")
      await rig.ok({ type: "turn.start", threadId: list.threadId as never, text: "Show me a checklist." })
      await rig.waitFor("turn.completed", list.threadId)
      expect(statuses(rig, list.threadId)).toEqual([
        ["inProgress", "pending", "pending"],
        ["completed", "inProgress", "pending"],
        ["completed", "completed", "completed"]
      ])

      const command = await rig.session("acp-codex", "default")
      await rig.ok({ type: "turn.start", threadId: command.threadId as never, text: "Run a command." })
      await rig.waitFor("turn.completed", command.threadId)
      // codex-acp 2.6 starts in `agent` ("auto review", canonical default): the escalated command
      // goes to Codex's own guardian review (a model request), not to the person; 0.16 asked.
      const events = rig.events(command.threadId).map((f) => f.event)
      expect(events.filter((e) => e.type === "request.opened")).toEqual([])
      expect(events.some((e) => e.type === "item.completed" && e.payload.title === "Guardian Review")).toBe(true)
    },
    STEP_MS * 4
  )

  it(
    "claude-agent-acp: a proposed plan to approve, a checklist, and a command approval",
    async () => {
      const plan = await rig.session("acp-claude", "plan")
      await rig.ok({ type: "turn.start", threadId: plan.threadId as never, text: "Propose a plan." })
      const proposed = await rig.waitFor("plan.proposed.completed", plan.threadId)
      expect(proposed.event.type === "plan.proposed.completed" && proposed.event.payload.markdown.trim()).toBe(
        DEMO_PLAN_MARKDOWN.trim()
      )
      await approveFirst(rig, plan.threadId, "plan_approval")
      await rig.waitFor("turn.completed", plan.threadId)

      const list = await rig.session("acp-claude", "default")
      await rig.ok({ type: "turn.start", threadId: list.threadId as never, text: "Work through a checklist." })
      await rig.waitFor("turn.completed", list.threadId)
      expect(statuses(rig, list.threadId).at(-1)).toEqual(["completed", "completed", "completed"])

      const command = await rig.session("acp-claude", "default")
      await rig.ok({ type: "turn.start", threadId: command.threadId as never, text: "Run a command." })
      await approveFirst(rig, command.threadId, "approval")
      await rig.waitFor("turn.completed", command.threadId)
      expect(readFileSync(join(command.cwd, DEMO_COMMAND_FILE), "utf8")).toBe("hello from the Planbridge demo\n")
    },
    STEP_MS * 6
  )

  it(
    "claude-agent-acp in plan mode: a command waits for approval, nothing is written before it",
    async () => {
      // Issue 27, item 1: with bypass mode available (any non-root user, or IS_SANDBOX), Claude
      // Code allowed every tool in plan mode without asking, so the command wrote its file unasked.
      const command = await rig.session("acp-claude", "plan")
      await rig.ok({ type: "turn.start", threadId: command.threadId as never, text: "run the command" })
      const file = join(command.cwd, DEMO_COMMAND_FILE)
      // Whichever comes first: the approval, or the end of a turn that never asked.
      const first = await rig.client.waitFor(
        (f): f is ServerFrame & { type: "event" } =>
          f.type === "event" &&
          f.threadId === command.threadId &&
          (f.event.type === "request.opened" || f.event.type === "turn.completed"),
        STEP_MS
      )
      expect([first.event.type, existsSync(file)]).toEqual(["request.opened", false])
      expect(first.event.type === "request.opened" && first.event.payload.requestKind).toBe("approval")
      await approveFirst(rig, command.threadId, "approval")
      await rig.waitFor("turn.completed", command.threadId)
      expect(readFileSync(file, "utf8")).toBe("hello from the Planbridge demo\n")
    },
    STEP_MS * 3
  )

  it(
    "claude-agent-acp offers no execute mode: bypass is what kept plan mode from asking",
    async () => {
      const cwd = mkdtempSync(join(tmpdir(), "planbridge-demo-cwd-"))
      onTestFinished(() => rmSync(cwd, { recursive: true, force: true }))
      const frame = await rig.client.command({ type: "session.start", provider: "acp-claude", cwd, mode: "execute" })
      expect(frame.type === "error" && [frame.error.code, frame.error.message]).toEqual([
        "unsupported",
        "claude-agent-acp offers no mode for 'execute' in this session"
      ])
    },
    STEP_MS
  )
})
