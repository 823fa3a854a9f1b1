import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { ServerFrame } from "@planbridge/contracts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEMO_COMMAND_FILE, DEMO_PLAN_MARKDOWN, IMPLEMENT_TEXT } from "../../src/demo/scenarios.ts"
import { functionCallOutputs } from "../support/mockResponsesModel.ts"
import { isEvent } from "../support/wsClient.ts"
import { shapeOf, startDemoRig, STEP_MS, type DemoRig } from "./demoRig.ts"

/**
 * Demo mode with the real `codex app-server` 0.171.0: each scenario end to end over the
 * WebSocket protocol, the model being the one Planbridge serves itself.
 */
let rig: DemoRig
beforeAll(async () => {
  rig = await startDemoRig()
})
afterAll(async () => {
  await rig?.close()
})

describe("demo mode, Codex", () => {
  it("welcome labels the demo providers", () => {
    const welcome = rig.client.frames.find((f) => f.type === "welcome")
    if (welcome?.type !== "welcome") throw new Error("no welcome")
    const codex = welcome.providers.find((p) => p.provider === "codex")
    expect(codex).toMatchObject({ label: "Codex (demo)", demo: true, capabilities: { supportsPlanMode: true } })
    expect(welcome.providers.every((p) => p.demo === true)).toBe(true)
    // The scripted models listen on loopback only.
    for (const model of Object.values(rig.demo.models)) expect(new URL(model.baseUrl).hostname).toBe("127.0.0.1")
  })

  it(
    "questions: a plan turn asks a choice and a free-text question, then proposes the plan",
    async () => {
      const { threadId } = await rig.session("codex", "plan")
      await rig.ok({ type: "turn.start", threadId: threadId as never, text: "Ask me questions, then plan." })
      const requested = await rig.waitFor("user-input.requested", threadId)
      if (requested.event.type !== "user-input.requested") throw new Error("unreachable")
      const { prompt } = requested.event.payload
      // 0.171.0 offers free text on every question (its own "None of the above" row).
      expect(prompt.questions.map((q) => [q.header, q.allowFreeform, q.multiSelect, q.options.length])).toEqual([
        ["Language", true, false, 2],
        ["Name", true, false, 2]
      ])
      const [language, name] = prompt.questions
      await rig.ok({
        type: "userInput.respond",
        promptId: prompt.promptId,
        answers: [
          { questionId: language!.id, selectedOptionIds: [language!.options[1]!.id] },
          { questionId: name!.id, text: "hello-world" }
        ],
        clientRequestId: "demo-codex-answer"
      })
      const plan = await rig.waitFor("plan.proposed.completed", threadId)
      expect(plan.event.type === "plan.proposed.completed" && plan.event.payload.markdown).toBe(DEMO_PLAN_MARKDOWN)
      await rig.waitFor("turn.completed", threadId)
      // The real app-server sent the scripted model the user's answers.
      const answered = rig.demo.models.codex.requests.find((r) => functionCallOutputs(r).length > 0)
      expect(JSON.parse(String(functionCallOutputs(answered!)[0]!.output))).toEqual({
        answers: {
          language: { answers: ["Go"] },
          service_name: { answers: ["None of the above", "user_note: hello-world"] }
        }
      })
    },
    STEP_MS * 3
  )

  it(
    "checklist: three updates, each a whole snapshot, then the closing text",
    async () => {
      const { threadId } = await rig.session("codex", "default")
      await rig.ok({ type: "turn.start", threadId: threadId as never, text: "Show me a checklist." })
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
    STEP_MS * 2
  )

  it(
    "command: an approval with Codex's own options; accepting it runs the command",
    async () => {
      const { threadId, cwd } = await rig.session("codex", "default")
      await rig.ok({ type: "turn.start", threadId: threadId as never, text: "Run a command." })
      const opened = await rig.waitFor("request.opened", threadId)
      if (opened.event.type !== "request.opened") throw new Error("unreachable")
      expect(opened.event.payload.requestKind).toBe("approval")
      expect(opened.event.payload.options.map((o) => o.id)).toContain("accept")
      await rig.ok({
        type: "request.respond",
        requestId: opened.event.payload.requestId,
        optionId: "accept" as never,
        clientRequestId: "demo-codex-approve"
      })
      await rig.waitFor("turn.completed", threadId)
      expect(readFileSync(join(cwd, DEMO_COMMAND_FILE), "utf8")).toBe("hello from the Planbridge demo\n")
    },
    STEP_MS * 2
  )

  it(
    "deterministic: the same message in a new session gives the same events",
    async () => {
      const play = async () => {
        const { threadId, cwd } = await rig.session("codex", "plan")
        await rig.ok({ type: "turn.start", threadId: threadId as never, text: "Propose a plan." })
        await rig.waitFor("turn.completed", threadId)
        expect(existsSync(join(cwd, DEMO_COMMAND_FILE))).toBe(false)
        return rig.events(threadId)
      }
      const first = await play()
      const second = await play()
      expect(shapeOf(second)).toEqual(shapeOf(first))
      expect(shapeOf(first)).toContain("plan.proposed.completed")
      const markdowns = (events: typeof first) =>
        events.flatMap((f) => (f.event.type === "plan.proposed.completed" ? [f.event.payload.markdown] : []))
      expect(markdowns(second)).toEqual(markdowns(first))
    },
    STEP_MS * 2
  )

  it(
    "issue 27: the checklist in plan mode says why nothing shows; 'Implement the plan.' proposes no plan again",
    async () => {
      const { threadId } = await rig.session("codex", "plan")
      await rig.ok({ type: "turn.start", threadId: threadId as never, text: "Show me a checklist." })
      await rig.waitFor("turn.completed", threadId)
      const said = (from: number) =>
        rig
          .events(threadId)
          .slice(from)
          .flatMap((f) =>
            f.event.type === "item.completed" && f.event.payload.itemType === "assistant_message"
              ? [f.event.payload.text ?? ""]
              : []
          )
      expect(said(0).join("\n")).toContain("turn plan mode off")

      const before = rig.events(threadId).length
      const lastSeq = rig.events(threadId).at(-1)!.seq
      await rig.ok({ type: "turn.start", threadId: threadId as never, text: "Implement the plan.", mode: "default" })
      await rig.client.waitFor(
        (f): f is ServerFrame & { type: "event" } => isEvent("turn.completed", threadId)(f) && f.seq > lastSeq,
        STEP_MS
      )
      expect(said(before)).toEqual([IMPLEMENT_TEXT])
      expect(JSON.stringify(rig.events(threadId).slice(before))).not.toContain("proposed_plan")
    },
    STEP_MS * 2
  )
})
