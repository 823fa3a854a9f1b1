/**
 * Records real Claude Agent SDK sessions (SDK 0.3.333, CLI 2.1.333) against the scripted model
 * into `fixtures/claude/<name>.jsonl`, and their replayed canonical events into
 * `fixtures/claude/<name>.events.jsonl` (the golden files the replay test pins).
 *
 *   bash scripts/in-loopback-netns.sh node apps/server/bin/run-ts.mjs apps/server/scripts/record-claude-fixtures.ts [name…]
 */
import type { OptionId, PromptQuestion, QuestionId, ThreadId } from "@planbridge/contracts"
import { saveFixture } from "./fixtureRecording.ts"
import { startClaudeHarness, type ClaudeHarness } from "../test/provider/claude/harness.ts"
import { assertLoopbackOnly } from "../test/support/loopbackOnly.ts"
import type { MessagesRequest } from "../test/support/mockMessagesModel.ts"
import type { ClaudeChecklistTools } from "../src/provider/claude/ClaudeUserEnv.ts"

const question = (text: string, header: string, labels: ReadonlyArray<string>, multiSelect = false) => ({
  question: text,
  header,
  options: labels.map((label) => ({ label, description: `${label}.` })),
  multiSelect
})
const ask = (...questions: ReadonlyArray<ReturnType<typeof question>>) => ({
  type: "tool_use" as const,
  name: "AskUserQuestion",
  input: { questions }
})
const exitPlan = { blocks: [{ type: "tool_use" as const, name: "ExitPlanMode", input: {} }] }
const text = (value: string) => ({ blocks: [{ type: "text" as const, text: value }] })
const optionId = (q: PromptQuestion | undefined, label: string) =>
  q?.options.find((o) => o.label === label)?.id as OptionId
const planPath = (body: MessagesRequest) => {
  const match = /\/[^\s"'`\\]*\/\.claude\/plans\/[^\s"'`\\]+\.md/.exec(JSON.stringify(body))
  if (match === null) throw new Error("the request names no plan file")
  return match[0]
}
const writePlan = (plan: string) => (body: MessagesRequest) => ({
  blocks: [{ type: "tool_use" as const, name: "Write", input: { file_path: planPath(body), content: plan } }]
})
const PLAN = "# Plan: greeting CLI\n\n1. Create greet.js.\n2. Add a test.\n"

interface Scenario {
  readonly mode: "plan" | "default"
  readonly checklistTools?: ClaudeChecklistTools
  readonly run: (h: ClaudeHarness) => Promise<void>
}

const turnDone = async (h: ClaudeHarness, mark: number) => {
  await h.waitFor("turn.completed", { after: mark })
}

const scenarios: Record<string, Scenario> = {
  "plan-session": {
    mode: "plan",
    run: async (h) => {
      h.mock.script(
        {
          blocks: [
            { type: "text", text: "Before planning, I need two decisions." },
            ask(
              question("Which style?", "Style", ["Formal", "Casual"]),
              question("Which extras?", "Extras", ["Colors", "Emoji", "Uppercase"], true)
            )
          ]
        },
        writePlan(PLAN),
        exitPlan,
        text("Plan approved. Done.")
      )
      await h.run(h.session.startTurn({ text: "Plan a tiny greeting CLI" }))
      const { prompt } = (await h.waitFor("user-input.requested")).payload
      const [style, extras] = prompt.questions
      await h.run(
        h.session.respondToUserInput({
          promptId: prompt.promptId,
          answers: [
            { questionId: style?.id as QuestionId, selectedOptionIds: [optionId(style, "Casual")] },
            {
              questionId: extras?.id as QuestionId,
              selectedOptionIds: [optionId(extras, "Colors"), optionId(extras, "Emoji")]
            }
          ]
        })
      )
      const plan = await h.waitFor("plan.proposed.completed")
      await h.run(h.session.decidePlan({ planId: plan.payload.planId, decision: "approved" }))
      await turnDone(h, 0)
    }
  },
  "plan-reject-edit": {
    mode: "plan",
    run: async (h) => {
      h.mock.script(writePlan(PLAN), exitPlan, exitPlan, text("Implementing the edited plan."))
      await h.run(h.session.startTurn({ text: "Plan it" }))
      const first = await h.waitFor("plan.proposed.completed")
      await h.run(
        h.session.decidePlan({ planId: first.payload.planId, decision: "rejected", feedback: "Drop the test step." })
      )
      const second = await h.waitFor("plan.proposed.completed", {
        where: (e) => e.payload.planId !== first.payload.planId
      })
      await h.run(
        h.session.decidePlan({
          planId: second.payload.planId,
          decision: "edited",
          editedMarkdown: "# Plan\n\n1. Only greet.js.\n"
        })
      )
      await turnDone(h, 0)
    }
  },
  tasks: {
    mode: "default",
    run: async (h) => {
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
        { blocks: [{ type: "tool_use", name: "TaskList", input: {} }] },
        {
          blocks: [
            { type: "thinking", thinking: "All tracked." },
            { type: "text", text: "Tasks done." }
          ]
        }
      )
      await h.run(h.session.startTurn({ text: "Track the work" }))
      await turnDone(h, 0)
    }
  },
  todowrite: {
    mode: "default",
    checklistTools: "todowrite",
    run: async (h) => {
      const todo = (content: string, status: string) => ({ content, status, activeForm: `Doing ${content}` })
      h.mock.script(
        {
          blocks: [
            { type: "tool_use", name: "TodoWrite", input: { todos: [todo("A", "in_progress"), todo("B", "pending")] } }
          ]
        },
        {
          blocks: [
            {
              type: "tool_use",
              name: "TodoWrite",
              input: { todos: [todo("A", "completed"), todo("B", "in_progress")] }
            }
          ]
        },
        {
          blocks: [
            { type: "tool_use", name: "TodoWrite", input: { todos: [todo("A", "completed"), todo("B", "completed")] } }
          ]
        },
        text("All done.")
      )
      await h.run(h.session.startTurn({ text: "Do A then B" }))
      await turnDone(h, 0)
    }
  },
  "interrupt-question": {
    mode: "plan",
    run: async (h) => {
      h.mock.script({ blocks: [ask(question("Still there?", "Ping", ["Yes", "No"]))] }, text("Back again."))
      await h.run(h.session.startTurn({ text: "Ask me something" }))
      await h.waitFor("user-input.requested")
      await h.run(h.session.interrupt())
      await turnDone(h, 0)
      const mark = h.events.length
      await h.run(h.session.startTurn({ text: "Still there?" }))
      await turnDone(h, mark)
    }
  },
  approvals: {
    mode: "default",
    run: async (h) => {
      h.mock.script(
        { blocks: [{ type: "tool_use", name: "AskUserQuestionHelper", input: { questions: [] } }] },
        {
          blocks: [
            {
              type: "tool_use",
              name: "Bash",
              input: { command: "echo allowed > allowed.txt", description: "write a file" }
            }
          ]
        },
        {
          blocks: [
            {
              type: "tool_use",
              name: "Bash",
              input: { command: "echo denied > denied.txt", description: "write a file" }
            }
          ]
        },
        text("Tools done.")
      )
      await h.run(h.session.startTurn({ text: "Use some tools" }))
      const first = await h.waitFor("request.opened")
      await h.run(h.session.respondToRequest(first.payload.requestId, "allow" as OptionId))
      const second = await h.waitFor("request.opened", {
        where: (e) => e.payload.requestId !== first.payload.requestId
      })
      await h.run(h.session.respondToRequest(second.payload.requestId, "deny" as OptionId))
      await turnDone(h, 0)
    }
  }
}

const record = async (name: string, scenario: Scenario) => {
  const h = await startClaudeHarness({
    mode: scenario.mode,
    threadId: `fixture-${name}`,
    ...(scenario.checklistTools !== undefined ? { checklistTools: scenario.checklistTools } : {})
  })
  try {
    await scenario.run(h)
  } finally {
    await h.close()
  }
  await saveFixture({
    dir: "claude",
    name,
    threadId: `fixture-${name}` as ThreadId,
    lines: h.transcript,
    live: h.events
  })
}

assertLoopbackOnly()
const wanted = process.argv.slice(2)
for (const [name, scenario] of Object.entries(scenarios)) {
  if (wanted.length === 0 || wanted.includes(name)) await record(name, scenario)
}
