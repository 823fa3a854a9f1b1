import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEMO_COMMAND_FILE, DEMO_PLAN_MARKDOWN } from "../../src/demo/scenarios.ts"
import { lastToolResults, toolResultText, withoutSystemReminders } from "../support/mockMessagesModel.ts"
import { shapeOf, startDemoRig, STEP_MS, type DemoRig } from "./demoRig.ts"

/**
 * Demo mode with the real Claude Agent SDK 0.3.333 and its CLI: each scenario end to end over
 * the WebSocket protocol, the model being the one Planbridge serves itself.
 */
let rig: DemoRig
beforeAll(async () => {
  rig = await startDemoRig()
})
afterAll(async () => {
  await rig?.close()
})

const EDITED_PLAN = "# Plan: a smaller greeting service\n\n1. Create `greet.js`.\n"

describe("demo mode, Claude", () => {
  it("welcome labels it a demo", () => {
    const welcome = rig.client.frames.find((f) => f.type === "welcome")
    if (welcome?.type !== "welcome") throw new Error("no welcome")
    expect(welcome.providers.find((p) => p.provider === "claude")).toMatchObject({
      label: "Claude (demo)",
      demo: true,
      capabilities: { supportsMultiSelect: true, supportsExitPlanMode: true }
    })
  })

  it(
    "questions: a single choice and a multi-select, then a plan the user edits and approves",
    async () => {
      const { threadId } = await rig.session("claude", "plan")
      await rig.ok({ type: "turn.start", threadId: threadId as never, text: "Ask me a question or two first." })
      const requested = await rig.waitFor("user-input.requested", threadId)
      if (requested.event.type !== "user-input.requested") throw new Error("unreachable")
      const { prompt } = requested.event.payload
      expect(prompt.questions.map((q) => [q.header, q.multiSelect, q.options.map((o) => o.label)])).toEqual([
        ["Language", false, ["TypeScript", "Go"]],
        ["Extras", true, ["Logging", "Metrics", "Docker"]]
      ])
      const [language, extras] = prompt.questions
      await rig.ok({
        type: "userInput.respond",
        promptId: prompt.promptId,
        answers: [
          { questionId: language!.id, selectedOptionIds: [language!.options[0]!.id] },
          { questionId: extras!.id, selectedOptionIds: [extras!.options[0]!.id, extras!.options[2]!.id] }
        ],
        clientRequestId: "demo-claude-answer"
      })
      const proposed = await rig.waitFor("plan.proposed.completed", threadId)
      if (proposed.event.type !== "plan.proposed.completed") throw new Error("unreachable")
      expect(proposed.event.payload.markdown.trim()).toBe(DEMO_PLAN_MARKDOWN.trim())
      await rig.ok({
        type: "plan.decide",
        threadId: threadId as never,
        planId: proposed.event.payload.planId,
        decision: "edited",
        editedMarkdown: EDITED_PLAN,
        clientRequestId: "demo-claude-plan"
      })
      const decision = await rig.waitFor("plan.decision", threadId)
      expect(decision.event.type === "plan.decision" && decision.event.payload).toMatchObject({ decision: "edited" })
      await rig.waitFor("turn.completed", threadId)

      // The real CLI told the scripted model the answers, then the plan the user approved.
      const main = rig.demo.models.claude.requests.filter((r) => r.kind === "main")
      const results = main.flatMap((r) => lastToolResults(r.body).map((b) => withoutSystemReminders(toolResultText(b))))
      expect(results.find((t) => t.includes("Which extras"))).toContain(
        '"Which extras should it have?"="Logging, Docker"'
      )
      expect(results.some((t) => t.includes("a smaller greeting service"))).toBe(true)
    },
    STEP_MS * 4
  )

  it(
    "checklist: TodoWrite snapshots walk through the three steps",
    async () => {
      const { threadId } = await rig.session("claude", "default")
      await rig.ok({ type: "turn.start", threadId: threadId as never, text: "Work through a checklist." })
      await rig.waitFor("turn.completed", threadId)
      const snapshots = rig
        .events(threadId)
        .flatMap((f) => (f.event.type === "turn.plan.updated" ? [f.event.payload.plan.steps.map((s) => s.status)] : []))
      expect(snapshots).toEqual([
        ["inProgress", "pending", "pending"],
        ["completed", "inProgress", "pending"],
        ["completed", "completed", "completed"]
      ])
    },
    STEP_MS * 3
  )

  it(
    "deterministic: the same message in a new session gives the same events",
    async () => {
      const play = async () => {
        const { threadId } = await rig.session("claude", "default")
        await rig.ok({ type: "turn.start", threadId: threadId as never, text: "Show me a checklist." })
        await rig.waitFor("turn.completed", threadId)
        return rig.events(threadId)
      }
      const first = await play()
      const second = await play()
      expect(shapeOf(second)).toEqual(shapeOf(first))
      const plans = (events: typeof first) =>
        events.flatMap((f) => (f.event.type === "turn.plan.updated" ? [f.event.payload.plan] : []))
      expect(plans(second)).toEqual(plans(first))
      expect(plans(first)).toHaveLength(3)
    },
    STEP_MS * 2
  )

  it(
    "command: Claude asks before Bash; allowing it runs the command",
    async () => {
      const { threadId, cwd } = await rig.session("claude", "default")
      await rig.ok({ type: "turn.start", threadId: threadId as never, text: "Run a command for me." })
      const opened = await rig.waitFor("request.opened", threadId)
      if (opened.event.type !== "request.opened") throw new Error("unreachable")
      expect(opened.event.payload).toMatchObject({ requestKind: "approval", title: "Allow Bash?" })
      await rig.ok({
        type: "request.respond",
        requestId: opened.event.payload.requestId,
        optionId: "allow" as never,
        clientRequestId: "demo-claude-approve"
      })
      await rig.waitFor("turn.completed", threadId)
      expect(readFileSync(join(cwd, DEMO_COMMAND_FILE), "utf8")).toBe("hello from the Planbridge demo\n")
    },
    STEP_MS * 2
  )
})
