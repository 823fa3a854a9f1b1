/** The claude-agent-acp recordings of record-acp-fixtures.ts: the Zed-era wrapper's and the current one's. */
import { OptionId, QuestionId } from "@planbridge/contracts"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { claudeAcpProfile } from "../src/provider/acp/profiles/claudeAcp.ts"
import { run } from "../test/provider/acp/harness.ts"
import { claudeEnv } from "../test/provider/acp/peers.ts"
import { planFilePath } from "../test/provider/claude/greetingPlan.ts"
import type { ScriptedResponse as MessagesTurn } from "../test/support/mockMessagesModel.ts"
import { type Recording, bin, zedClaudeAcp } from "./acpRecording.ts"

export const claudeRecording = (
  scratch: string,
  baseUrl: string,
  script: (turns: ReadonlyArray<MessagesTurn>) => void
): Recording => {
  const work = join(scratch, "work")
  mkdirSync(work)
  return {
    dir: "acp",
    name: "claude-agent-acp-0.23.1-planmode-exitplan-permission",
    agent: "@zed-industries/claude-agent-acp 0.23.1",
    profile: claudeAcpProfile({ command: zedClaudeAcp }),
    env: claudeEnv(scratch, baseUrl),
    cwd: work,
    mode: "plan",
    scratch,
    drive: async ({ session, log }) => {
      script([
        {
          blocks: [
            { type: "text", text: "Let me plan this." },
            {
              type: "tool_use",
              name: "TodoWrite",
              id: "toolu_todo_1",
              input: {
                todos: [
                  { content: "Inspect the workspace", status: "in_progress", activeForm: "Inspecting" },
                  { content: "Create hi.txt", status: "pending", activeForm: "Creating hi.txt" }
                ]
              }
            }
          ]
        },
        {
          blocks: [
            { type: "text", text: "Here is my plan." },
            {
              type: "tool_use",
              name: "ExitPlanMode",
              id: "toolu_exit_1",
              input: { plan: "1. Inspect the workspace\n2. Create hi.txt" }
            }
          ]
        },
        {
          blocks: [
            {
              type: "tool_use",
              name: "Bash",
              id: "toolu_bash_1",
              input: { command: "echo hi > hi.txt", description: "Create hi.txt" }
            }
          ]
        },
        { blocks: [{ type: "text", text: "Created hi.txt." }] }
      ])
      const from = log.events.length
      const turn = await run(session.startTurn({ text: "plan the creation of hi.txt" }))
      const plan = await log.waitFor("request.opened", (e) => e.payload.requestKind === "plan_approval", {
        from,
        ms: 30_000
      })
      await run(session.decidePlan({ planId: plan.payload.planId!, decision: "approved" }))
      const approval = await log.waitFor("request.opened", (e) => e.payload.requestKind === "approval", {
        from,
        ms: 30_000
      })
      await run(
        session.respondToRequest(
          approval.payload.requestId,
          approval.payload.options.find((o) => o.kind === "allow_once")!.id
        )
      )
      await log.waitFor("turn.completed", (e) => e.turnId === turn, { ms: 30_000 })
    }
  }
}

/**
 * claude-agent-acp 0.101: plan mode, AskUserQuestion answered as a card, TodoWrite, the plan
 * written to the CLI's plan file and ExitPlanMode's own options (`exit-plan-default` chosen), the
 * approved plan's `plan_update`, then a Bash permission allowed once.
 */
export const claudeCurrentRecording = (
  scratch: string,
  baseUrl: string,
  script: (turns: ReadonlyArray<MessagesTurn>) => void
): Recording => {
  const work = join(scratch, "work")
  mkdirSync(work)
  // The CLI writes the plan file without creating its folder when the model writes first.
  mkdirSync(join(scratch, ".claude", "plans"), { recursive: true })
  return {
    dir: "acp",
    name: "claude-agent-acp-0.101.0-plan-question-exitplan-options",
    agent: "@agentclientprotocol/claude-agent-acp 0.101.0",
    profile: claudeAcpProfile({ command: bin("claude-agent-acp") }),
    env: claudeEnv(scratch, baseUrl),
    cwd: work,
    mode: "plan",
    scratch,
    drive: async ({ session, log }) => {
      script([
        {
          blocks: [
            {
              type: "tool_use",
              name: "AskUserQuestion",
              input: {
                questions: [
                  {
                    question: "Which database should the service use?",
                    header: "Database",
                    multiSelect: false,
                    options: [
                      { label: "PostgreSQL", description: "Relational." },
                      { label: "SQLite", description: "Embedded." }
                    ]
                  }
                ]
              }
            }
          ]
        },
        {
          blocks: [
            {
              type: "tool_use",
              name: "TodoWrite",
              input: {
                todos: [
                  { content: "Inspect the workspace", status: "in_progress", activeForm: "Inspecting the workspace" },
                  { content: "Create hi.txt", status: "pending", activeForm: "Creating hi.txt" }
                ]
              }
            }
          ]
        },
        (body) => ({
          blocks: [
            {
              type: "tool_use",
              name: "Write",
              input: { file_path: planFilePath(body), content: "1. Inspect the workspace\n2. Create hi.txt" }
            }
          ]
        }),
        { blocks: [{ type: "tool_use", name: "ExitPlanMode", input: {} }] },
        {
          blocks: [
            { type: "tool_use", name: "Bash", input: { command: "echo hi > hi.txt", description: "Create hi.txt" } }
          ]
        },
        { blocks: [{ type: "text", text: "Created hi.txt." }] }
      ])
      const from = log.events.length
      const turn = await run(session.startTurn({ text: "plan the creation of hi.txt" }))
      const asked = await log.waitFor("user-input.requested", () => true, { from, ms: 30_000 })
      const question = asked.payload.prompt.questions[0]!
      await run(
        session.respondToUserInput({
          promptId: asked.payload.prompt.promptId,
          answers: [{ questionId: QuestionId.make(question.id), selectedOptionIds: [OptionId.make("SQLite")] }]
        })
      )
      const review = await log.waitFor("request.opened", (e) => e.payload.requestKind === "plan_approval", {
        from,
        ms: 30_000
      })
      await run(
        session.decidePlan({
          planId: review.payload.planId!,
          decision: "approved",
          optionId: OptionId.make("exit-plan-default")
        })
      )
      const approval = await log.waitFor("request.opened", (e) => e.payload.requestKind === "approval", {
        from,
        ms: 30_000
      })
      await run(
        session.respondToRequest(
          approval.payload.requestId,
          approval.payload.options.find((o) => o.kind === "allow_once")!.id
        )
      )
      await log.waitFor("turn.completed", (e) => e.turnId === turn, { ms: 30_000 })
    }
  }
}
