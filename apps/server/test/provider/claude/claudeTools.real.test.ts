import type { OptionId, PromptQuestion, QuestionId, RequestId } from "@planbridge/contracts"
import { Effect } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import { lastToolResults, toolResultText, withoutSystemReminders } from "../../support/mockMessagesModel.ts"
import { startClaudeHarness, type ClaudeHarness } from "./harness.ts"

/**
 * The real CLI with the `todowrite` checklist option (TodoWrite instead of Task*), in default mode:
 * checklists, ordinary tools and their approvals, parallel questions, and a killed CLI.
 */

const question = (q: string, header: string, labels: ReadonlyArray<string>) => ({
  question: q,
  header,
  options: labels.map((label) => ({ label, description: `${label}.` })),
  multiSelect: false
})
const todo = (content: string, status: string) => ({ content, status, activeForm: `Doing ${content}` })
const option = (q: PromptQuestion | undefined, label: string) =>
  q?.options.find((o) => o.label === label)?.id as OptionId

/** Children of this test process (the CLI runs in its own process group, but is still our child). */
const childPids = (): ReadonlyArray<number> =>
  readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === process.pid
      } catch {
        return false
      }
    })
    .map(Number)

let h: ClaudeHarness
const started = Date.now()

beforeAll(async () => {
  assertLoopbackOnly()
  h = await startClaudeHarness({ mode: "default", checklistTools: "todowrite" })
})
afterAll(async () => {
  await h?.close()
  console.log(`claude real-peer session B: ${Date.now() - started} ms`)
})

describe("Claude adapter on the real SDK: tools", () => {
  it("turns three TodoWrite revisions into three checklist snapshots", async () => {
    h.mock.script(
      {
        blocks: [
          { type: "tool_use", name: "TodoWrite", input: { todos: [todo("A", "in_progress"), todo("B", "pending")] } }
        ]
      },
      {
        blocks: [
          { type: "tool_use", name: "TodoWrite", input: { todos: [todo("A", "completed"), todo("B", "in_progress")] } }
        ]
      },
      {
        blocks: [
          { type: "tool_use", name: "TodoWrite", input: { todos: [todo("A", "completed"), todo("B", "completed")] } }
        ]
      },
      { blocks: [{ type: "text", text: "All done." }] }
    )
    const mark = h.events.length
    await h.run(h.session.startTurn({ text: "Do A then B" }))
    await h.waitFor("turn.completed", { after: mark })
    const snapshots = h.events.slice(mark).flatMap((e) => (e.type === "turn.plan.updated" ? [e.payload.plan] : []))
    expect(snapshots.map((p) => p.steps.map((s) => `${s.step}:${s.status}:${s.activeForm}`))).toEqual([
      ["A:inProgress:Doing A", "B:pending:Doing B"],
      ["A:completed:Doing A", "B:inProgress:Doing B"],
      ["A:completed:Doing A", "B:completed:Doing B"]
    ])
    expect(snapshots.every((p) => p.source === "tool-derived")).toBe(true)
  })

  it("keeps ordinary tools as items: a look-alike name is not a prompt; approvals only when canUseTool asks", async () => {
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
            input: { command: "echo denied > denied.txt", description: "write another" }
          }
        ]
      },
      { blocks: [{ type: "text", text: "Tools done." }] }
    )
    const mark = h.events.length
    await h.run(h.session.startTurn({ text: "Use some tools" }))
    const first = await h.waitFor("request.opened", { after: mark })
    expect(first.payload).toMatchObject({ requestKind: "approval", title: "Allow Bash?" })
    expect(first.payload.options.map((o) => o.id)).toEqual(["allow", "deny"])
    await h.run(h.session.respondToRequest(first.payload.requestId, "allow" as OptionId))
    const second = await h.waitFor("request.opened", {
      after: mark,
      where: (e) => e.payload.requestId !== first.payload.requestId
    })
    await h.run(h.session.respondToRequest(second.payload.requestId as RequestId, "deny" as OptionId))
    await h.waitFor("turn.completed", { after: mark })

    const events = h.events.slice(mark)
    expect(events.filter((e) => e.type === "user-input.requested" || e.type === "plan.proposed.completed")).toEqual([])
    const completed = events.flatMap((e) =>
      e.type === "item.completed" && e.payload.toolName !== undefined
        ? [[e.payload.toolName, e.payload.itemType, e.payload.status]]
        : []
    )
    expect(completed).toEqual([
      ["AskUserQuestionHelper", "tool_call", "failed"],
      ["Bash", "command", "completed"],
      ["Bash", "command", "declined"]
    ])
    expect(readFileSync(`${h.cwd}/allowed.txt`, "utf8")).toBe("allowed\n")
    expect(() => readFileSync(`${h.cwd}/denied.txt`)).toThrow()
  })

  it("keys two parallel AskUserQuestion calls by tool use and answers them in any order", async () => {
    const q1 = question("First question?", "First", ["One", "Two"])
    const q2 = question("Second question?", "Second", ["Three", "Four"])
    h.mock.script(
      {
        blocks: [
          { type: "tool_use", name: "AskUserQuestion", input: { questions: [q1] } },
          { type: "tool_use", name: "AskUserQuestion", input: { questions: [q2] } }
        ]
      },
      { blocks: [{ type: "text", text: "Thanks." }] }
    )
    const mark = h.events.length
    await h.run(h.session.startTurn({ text: "Ask two things" }))
    const a = await h.waitFor("user-input.requested", { after: mark })
    const b = await h.waitFor("user-input.requested", {
      after: mark,
      where: (e) => e.payload.prompt.promptId !== a.payload.prompt.promptId
    })
    const [qa] = a.payload.prompt.questions
    const [qb] = b.payload.prompt.questions
    await h.run(
      h.session.respondToUserInput({
        promptId: b.payload.prompt.promptId,
        answers: [{ questionId: qb.id, selectedOptionIds: [option(qb, "Four")], text: "quickly" }]
      })
    )
    await h.run(
      h.session.respondToUserInput({
        promptId: a.payload.prompt.promptId,
        answers: [{ questionId: qa.id as QuestionId, text: "Neither, a third way" }]
      })
    )
    await h.waitFor("turn.completed", { after: mark })
    const last = h.mock.mainRequests().at(-1)?.body ?? {}
    const texts = lastToolResults(last).map((r) => withoutSystemReminders(toolResultText(r)))
    expect(texts).toHaveLength(2)
    expect(texts.some((t) => t.includes(`"First question?"="Neither, a third way"`))).toBe(true)
    // Free text next to a selection travels as annotation notes.
    expect(texts.some((t) => t.includes(`"Second question?"="Four" notes: quickly`))).toBe(true)
  })

  it("dismisses a question without an answer: the model is told the user did not answer", async () => {
    h.mock.script(
      {
        blocks: [
          {
            type: "tool_use",
            name: "AskUserQuestion",
            input: { questions: [question("Tabs or spaces?", "Indent", ["Tabs", "Spaces"])] }
          }
        ]
      },
      { blocks: [{ type: "text", text: "I will pick." }] }
    )
    const mark = h.events.length
    await h.run(h.session.startTurn({ text: "Ask about indentation" }))
    const requested = await h.waitFor("user-input.requested", { after: mark })
    await h.run(h.session.dismissUserInput(requested.payload.prompt.promptId, "empty"))
    expect((await h.waitFor("user-input.resolved", { after: mark })).payload).toMatchObject({
      resolution: "empty",
      answers: []
    })
    await h.waitFor("turn.completed", { after: mark })
    const last = h.mock.mainRequests().at(-1)?.body ?? {}
    expect(lastToolResults(last).map((r) => withoutSystemReminders(toolResultText(r)))).toEqual([
      "The user did not answer the questions."
    ])
  })

  it("resolves a pending prompt provider_exited when the CLI is killed", async () => {
    h.mock.script({
      blocks: [
        {
          type: "tool_use",
          name: "AskUserQuestion",
          input: { questions: [question("Still there?", "Ping", ["Yes", "No"])] }
        }
      ]
    })
    const mark = h.events.length
    const before = new Set(childPids())
    await h.run(h.session.startTurn({ text: "Ask, then die" }))
    const requested = await h.waitFor("user-input.requested", { after: mark })
    expect(before.size).toBeGreaterThan(0)
    for (const pid of before) process.kill(pid, "SIGKILL")
    const resolved = await h.waitFor("user-input.resolved", { after: mark })
    expect(resolved.payload).toMatchObject({
      promptId: requested.payload.prompt.promptId,
      resolution: "provider_exited"
    })
    expect((await h.waitFor("turn.completed", { after: mark })).payload.status).toBe("failed")
    const exited = await h.waitFor("session.exited", { after: mark })
    expect(exited.payload).toMatchObject({ exitKind: "killed", signal: "SIGKILL" })
    const refused = await h.run(Effect.flip(h.session.startTurn({ text: "again" })))
    expect(refused.kind).toBe("provider_exited")
    expect(h.events.filter((e) => e.type === "runtime.warning" || e.type === "runtime.error")).toEqual([])
  })
})
