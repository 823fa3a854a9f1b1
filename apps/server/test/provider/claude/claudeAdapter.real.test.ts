import type { OptionId, PromptQuestion, QuestionId, RuntimeEvent } from "@planbridge/contracts"
import { Effect } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { claudeReplayMapping } from "../../../src/provider/claude/ClaudeReplay.ts"
import { replay } from "../../../src/provider/kernel/replay.ts"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import {
  lastToolResults,
  lastUserText,
  toolResultText,
  withoutSystemReminders,
  type MessagesRequest
} from "../../support/mockMessagesModel.ts"
import { startClaudeHarness, type ClaudeHarness } from "./harness.ts"

/**
 * The real Claude Agent SDK 0.3.333 and CLI 2.1.333 against the scripted model. One session
 * carries the plan, reject/edit, task and interrupt scenarios (one CLI start); TodoWrite needs
 * a second session because it is only enabled by an environment variable.
 */

const STYLE = "Which greeting style should the CLI use?"
const EXTRAS = "Which extras do you want?"
const PLAN_TEXT = "# Plan: greeting CLI\n\n1. Create greet.js.\n2. Add a test.\n"

const askQuestions = {
  type: "tool_use",
  name: "AskUserQuestion",
  input: {
    questions: [
      {
        question: STYLE,
        header: "Style",
        options: [
          { label: "Formal", description: "Good day, <name>." },
          { label: "Casual", description: "Hey <name>!" }
        ],
        multiSelect: false
      },
      {
        question: EXTRAS,
        header: "Extras",
        options: [
          { label: "Colors", description: "ANSI colored output" },
          { label: "Emoji", description: "Append a wave emoji" },
          { label: "Uppercase", description: "SHOUT the greeting" }
        ],
        multiSelect: true
      }
    ]
  }
} as const

/** The CLI tells the model where its plan file goes; a plan-mode Write must use that path. */
const planFilePath = (body: MessagesRequest): string => {
  const match = /\/[^\s"'`\\]*\/\.claude\/plans\/[^\s"'`\\]+\.md/.exec(JSON.stringify(body))
  if (match === null) throw new Error("the request names no plan file")
  return match[0]
}

const writePlan = (text: string) => (body: MessagesRequest) => ({
  blocks: [{ type: "tool_use" as const, name: "Write", input: { file_path: planFilePath(body), content: text } }]
})

let h: ClaudeHarness
const started = Date.now()

beforeAll(async () => {
  assertLoopbackOnly()
  h = await startClaudeHarness({ mode: "plan" })
})
afterAll(async () => {
  await h?.close()
  console.log(`claude real-peer session A: ${Date.now() - started} ms`)
})

describe("Claude adapter on the real SDK: plan session", () => {
  it("answers AskUserQuestion from the canonical side, then approves ExitPlanMode and leaves plan mode", async () => {
    h.mock.script(
      { blocks: [{ type: "text", text: "Before planning, I need two decisions from you." }, askQuestions] },
      writePlan(PLAN_TEXT),
      { blocks: [{ type: "tool_use", name: "ExitPlanMode", input: {} }] },
      { blocks: [{ type: "text", text: "Plan approved. Done." }] }
    )
    const turnId = await h.run(h.session.startTurn({ text: "Plan a tiny greeting CLI" }))
    const requested = await h.waitFor("user-input.requested")
    const prompt = requested.payload.prompt
    expect(requested.turnId).toBe(turnId)
    expect(prompt.source).toBe("tool-derived")
    expect(prompt.blocking).toBe(true)
    expect(prompt.questions.map((q) => [q.header, q.label, q.multiSelect, q.allowFreeform])).toEqual([
      ["Style", STYLE, false, true],
      ["Extras", EXTRAS, true, true]
    ])
    const [style, extras] = prompt.questions
    const option = (q: PromptQuestion | undefined, label: string) =>
      q?.options.find((o) => o.label === label)?.id as OptionId

    const invalid = await h.run(
      Effect.flip(
        h.session.respondToUserInput({
          promptId: prompt.promptId,
          answers: [
            {
              questionId: style?.id as QuestionId,
              selectedOptionIds: [option(style, "Casual"), option(style, "Formal")]
            }
          ]
        })
      )
    )
    expect(invalid.kind).toBe("invalid_answer")
    await h.run(
      h.session.respondToUserInput({
        promptId: prompt.promptId,
        answers: [
          { questionId: style?.id as QuestionId, selectedOptionIds: [option(style, "Casual")] },
          {
            questionId: extras?.id as QuestionId,
            selectedOptionIds: [option(extras, "Colors"), option(extras, "Emoji")]
          }
        ]
      })
    )
    const resolved = await h.waitFor("user-input.resolved")
    expect(resolved.payload.resolution).toBe("answered")

    // The model's next request carries exactly these answers in the tool result.
    const [, second] = await h.mock.waitForMainRequests(2)
    const results = lastToolResults(second?.body ?? {})
    expect(results).toHaveLength(1)
    expect(withoutSystemReminders(toolResultText(results[0] ?? { type: "none" }))).toBe(
      `Your questions have been answered: "${STYLE}"="Casual", "${EXTRAS}"="Colors, Emoji". You can now continue with these answers in mind.`
    )

    const proposed = await h.waitFor("plan.proposed.completed")
    expect(proposed.payload.markdown).toBe(PLAN_TEXT)
    expect(proposed.payload.filePath).toMatch(/\/\.claude\/plans\/.+\.md$/)
    expect(readFileSync(proposed.payload.filePath ?? "", "utf8")).toBe(PLAN_TEXT)
    const opened = await h.waitFor("request.opened", { where: (e) => e.payload.requestKind === "plan_approval" })
    expect(opened.payload.planId).toBe(proposed.payload.planId)

    const mark = h.events.length
    await h.run(h.session.decidePlan({ planId: proposed.payload.planId, decision: "approved" }))
    expect((await h.waitFor("plan.decision", { after: mark })).payload.decision).toBe("approved")
    expect((await h.waitFor("mode.changed", { after: mark })).payload).toEqual({
      mode: "default",
      nativeMode: "default"
    })
    const completed = await h.waitFor("turn.completed", { after: mark })
    expect(completed.turnId).toBe(turnId)
    expect(completed.payload.status).toBe("completed")
    expect(await h.run(h.session.mode)).toBe("default")
    expect(existsSync(proposed.payload.filePath ?? "")).toBe(true)
  })

  it("rejects a plan with feedback (stays in plan mode), then approves an edited plan the model sees", async () => {
    await h.run(h.session.setMode("plan"))
    const edited = "# Plan: greeting CLI (edited)\n\n1. Only greet.js.\n"
    h.mock.script(
      writePlan(PLAN_TEXT),
      { blocks: [{ type: "tool_use", name: "ExitPlanMode", input: {} }] },
      (body) => ({
        blocks: [
          { type: "text", text: `I heard: ${lastUserText(body)}` },
          { type: "tool_use", name: "ExitPlanMode", input: {} }
        ]
      }),
      { blocks: [{ type: "text", text: "Implementing the edited plan." }] }
    )
    const before = h.mock.mainRequests().length
    const mark = h.events.length
    await h.run(h.session.startTurn({ text: "Plan it again" }))
    expect((await h.waitFor("mode.changed", { after: mark })).payload.mode).toBe("plan")
    const first = await h.waitFor("plan.proposed.completed", { after: mark })
    await h.run(
      h.session.decidePlan({
        planId: first.payload.planId,
        decision: "rejected",
        feedback: "Drop the test step, please."
      })
    )
    expect((await h.waitFor("plan.decision", { after: mark })).payload).toMatchObject({
      decision: "rejected",
      feedback: "Drop the test step, please."
    })

    const second = await h.waitFor("plan.proposed.completed", {
      after: mark,
      where: (e) => e.payload.planId !== first.payload.planId
    })
    const afterReject = h.mock.mainRequests()[before + 2]?.body ?? {}
    expect(lastUserText(afterReject)).toContain("Drop the test step, please.")
    expect(await h.run(h.session.mode)).toBe("plan")
    expect(h.events.slice(mark).filter((e) => e.type === "mode.changed")).toHaveLength(1)

    const mark2 = h.events.length
    await h.run(h.session.decidePlan({ planId: second.payload.planId, decision: "edited", editedMarkdown: edited }))
    expect((await h.waitFor("plan.decision", { after: mark2 })).payload).toMatchObject({
      decision: "edited",
      editedMarkdown: edited
    })
    expect((await h.waitFor("turn.completed", { after: mark2 })).payload.status).toBe("completed")
    const afterEdit = h.mock.mainRequests()[before + 3]?.body ?? {}
    // The CLI marks the result planWasEdited, and the model reads the plan as the user's edit.
    expect(lastUserText(afterEdit)).toContain(`## Approved Plan (edited by user):\n${edited}`)
    const echoed = h.transcript.find((l) => l.dir === "in" && JSON.stringify(l.msg).includes('"planWasEdited":true'))
    expect(echoed).toBeDefined()
    expect(await h.run(h.session.mode)).toBe("default")
  })

  it("publishes the whole task list after every Task* change", async () => {
    h.mock.script(
      {
        blocks: [
          {
            type: "tool_use",
            name: "TaskCreate",
            input: { subject: "Write greet.js", description: "the CLI", activeForm: "Writing greet.js" }
          }
        ]
      },
      {
        blocks: [
          {
            type: "tool_use",
            name: "TaskCreate",
            input: { subject: "Add a test", description: "vitest", activeForm: "Adding a test" }
          }
        ]
      },
      { blocks: [{ type: "tool_use", name: "TaskUpdate", input: { taskId: "1", status: "in_progress" } }] },
      { blocks: [{ type: "tool_use", name: "TaskUpdate", input: { taskId: "2", status: "deleted" } }] },
      { blocks: [{ type: "text", text: "Tasks done." }] }
    )
    const mark = h.events.length
    await h.run(h.session.startTurn({ text: "Track the work" }))
    await h.waitFor("turn.completed", { after: mark })
    const snapshots = h.events
      .slice(mark)
      .flatMap((e) =>
        e.type === "turn.plan.updated" ? [e.payload.plan.steps.map((s) => [s.id, s.step, s.status, s.activeForm])] : []
      )
    expect(snapshots).toEqual([
      [["1", "Write greet.js", "pending", "Writing greet.js"]],
      [
        ["1", "Write greet.js", "pending", "Writing greet.js"],
        ["2", "Add a test", "pending", "Adding a test"]
      ],
      [
        ["1", "Write greet.js", "inProgress", "Writing greet.js"],
        ["2", "Add a test", "pending", "Adding a test"]
      ],
      [["1", "Write greet.js", "inProgress", "Writing greet.js"]]
    ])
    // Checklist tools are not items, prompts or plans.
    expect(
      h.events
        .slice(mark)
        .filter((e) => (e.type === "item.started" && e.payload.toolName !== undefined) || e.type === "request.opened")
    ).toEqual([])
  })

  it("cancels a pending question on interrupt and keeps the session usable", async () => {
    h.mock.script({ blocks: [askQuestions] }, { blocks: [{ type: "text", text: "Back again." }] })
    const mark = h.events.length
    const turnId = await h.run(h.session.startTurn({ text: "Ask me something" }))
    const requested = await h.waitFor("user-input.requested", { after: mark })
    // A second message now would be queued behind the question and lost on interrupt.
    expect((await h.run(Effect.flip(h.session.startTurn({ text: "too early" })))).kind).toBe("busy")
    await h.run(h.session.interrupt())
    const resolved = await h.waitFor("user-input.resolved", { after: mark })
    expect(resolved.payload).toMatchObject({ promptId: requested.payload.prompt.promptId, resolution: "cancelled" })
    const completed = await h.waitFor("turn.completed", { after: mark })
    expect(completed).toMatchObject({ turnId, payload: { status: "interrupted" } })
    const late = await h.run(
      Effect.flip(h.session.respondToUserInput({ promptId: requested.payload.prompt.promptId, answers: [] }))
    )
    expect(late.kind).toBe("prompt_not_pending")

    const mark2 = h.events.length
    const next = await h.run(h.session.startTurn({ text: "Still there?" }))
    const done = await h.waitFor("turn.completed", { after: mark2 })
    expect(done).toMatchObject({ turnId: next, payload: { status: "completed" } })
    expect(h.events.slice(mark2).some((e) => e.type === "item.completed" && e.payload.text === "Back again.")).toBe(
      true
    )
  })

  it("replays its own transcript into the same canonical events", async () => {
    const replayed = await Effect.runPromise(
      replay(claudeReplayMapping, h.transcript, { threadId: h.session.threadId })
    )
    const strip = (events: ReadonlyArray<RuntimeEvent>) => events.map(({ eventId: _e, createdAt: _c, ...rest }) => rest)
    expect(strip(replayed)).toEqual(strip(h.events))
    expect(h.events.filter((e) => e.type === "runtime.warning" || e.type === "runtime.error")).toEqual([])
  })
})
