/** The codex-acp recordings of record-acp-fixtures.ts: the Zed-era wrapper's and the current one's. */
import { OptionId, QuestionId } from "@planbridge/contracts"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { codexAcpProfile } from "../src/provider/acp/profiles/codexAcp.ts"
import { run } from "../test/provider/acp/harness.ts"
import { writeCodexHome } from "../test/provider/acp/peers.ts"
import { askTwoQuestions, planReply } from "../test/provider/codex/realPeerSupport.ts"
import type { ScriptedResponse as ResponsesTurn } from "../test/support/mockResponsesModel.ts"
import { type Recording, bin, zedCodexAcp } from "./acpRecording.ts"

export const codexRecording = (
  scratch: string,
  baseUrl: string,
  script: (turns: ReadonlyArray<ResponsesTurn>) => void
): Recording => {
  writeCodexHome(scratch, baseUrl)
  const work = join(scratch, "work")
  mkdirSync(work)
  const plan = (s: ReadonlyArray<string>) => ({
    plan: [
      { step: "Inspect the workspace", status: s[0] },
      { step: "Create hello.txt", status: s[1] },
      { step: "Report back", status: s[2] }
    ]
  })
  return {
    dir: "acp",
    name: "codex-acp-0.16.0-modes-plan-permission-cancel",
    agent: "@zed-industries/codex-acp 0.16.0",
    profile: codexAcpProfile({ command: zedCodexAcp }),
    env: { PATH: process.env.PATH, HOME: scratch, CODEX_HOME: scratch, MOCK_KEY: "mock-key" },
    cwd: work,
    mode: "default",
    scratch,
    drive: async ({ session, log }) => {
      await run(session.setMode("execute"))
      await run(session.setMode("default"))
      script([
        {
          output: [
            { type: "text", text: "Planning first." },
            {
              type: "function_call",
              name: "update_plan",
              arguments: plan(["completed", "in_progress", "pending"]),
              callId: "call_plan_1"
            }
          ]
        },
        {
          output: [
            {
              type: "function_call",
              name: "exec_command",
              arguments: {
                cmd: "echo hello > hello.txt",
                sandbox_permissions: "require_escalated",
                justification: "Write hello.txt"
              },
              callId: "call_exec_1"
            }
          ]
        },
        {
          output: [
            {
              type: "function_call",
              name: "update_plan",
              arguments: plan(["completed", "completed", "completed"]),
              callId: "call_plan_2"
            }
          ]
        },
        { output: [{ type: "text", text: "Done: created hello.txt." }] },
        {
          output: [
            {
              type: "function_call",
              name: "exec_command",
              arguments: {
                cmd: "echo again > again.txt",
                sandbox_permissions: "require_escalated",
                justification: "Write again.txt"
              },
              callId: "call_exec_2"
            }
          ]
        }
      ])
      let from = log.events.length
      const turn = await run(session.startTurn({ text: "please create hello.txt" }))
      const opened = await log.waitFor("request.opened", () => true, { from })
      await run(
        session.respondToRequest(
          opened.payload.requestId,
          opened.payload.options.find((o) => o.kind === "allow_once")!.id
        )
      )
      await log.waitFor("turn.completed", (e) => e.turnId === turn, { ms: 30_000 })
      from = log.events.length
      const cancelled = await run(session.startTurn({ text: "write again.txt" }))
      await log.waitFor("request.opened", () => true, { from })
      await run(session.interrupt())
      await log.waitFor("turn.completed", (e) => e.turnId === cancelled, { ms: 30_000 })
    }
  }
}

/**
 * codex-acp 2.6: plan mode through its `collaboration_mode` config option, the model's questions
 * as a form elicitation answered from the client, the plan as a `plan_update`, its review's
 * `revise_plan`, then a second plan's `implement_plan` (codex-acp leaves plan mode itself).
 */
export const codexCurrentRecording = (
  scratch: string,
  baseUrl: string,
  script: (turns: ReadonlyArray<ResponsesTurn>) => void
): Recording => {
  writeCodexHome(scratch, baseUrl)
  const work = join(scratch, "work")
  mkdirSync(work)
  return {
    dir: "acp",
    name: "codex-acp-2.6.0-collaboration-plan-elicitation-review",
    agent: "@agentclientprotocol/codex-acp 2.6.0",
    profile: codexAcpProfile({ command: bin("codex-acp") }),
    env: { PATH: process.env.PATH, HOME: scratch, CODEX_HOME: scratch, MOCK_KEY: "mock-key" },
    cwd: work,
    mode: "default",
    scratch,
    drive: async ({ session, log }) => {
      await run(session.setMode("plan"))
      script([{ output: [askTwoQuestions] }, { output: [planReply] }])
      let from = log.events.length
      const revised = await run(session.startTurn({ text: "plan the service" }))
      const asked = await log.waitFor("user-input.requested", () => true, { from, ms: 30_000 })
      await run(
        session.respondToUserInput({
          promptId: asked.payload.prompt.promptId,
          answers: [
            { questionId: QuestionId.make("db_choice"), selectedOptionIds: [OptionId.make("SQLite")] },
            {
              questionId: QuestionId.make("test_scope"),
              selectedOptionIds: [OptionId.make("Unit only (Recommended)")]
            }
          ]
        })
      )
      const review = await log.waitFor("request.opened", (e) => e.payload.requestKind === "plan_approval", {
        from,
        ms: 30_000
      })
      await run(
        session.decidePlan({
          planId: review.payload.planId!,
          decision: "rejected",
          optionId: OptionId.make("revise_plan")
        })
      )
      await log.waitFor("turn.completed", (e) => e.turnId === revised, { ms: 30_000 })
      script([{ output: [planReply] }, { output: [{ type: "text", text: "Implementing the plan now." }] }])
      from = log.events.length
      const implemented = await run(session.startTurn({ text: "plan it again" }))
      const again = await log.waitFor("request.opened", (e) => e.payload.requestKind === "plan_approval", {
        from,
        ms: 30_000
      })
      await run(
        session.decidePlan({
          planId: again.payload.planId!,
          decision: "approved",
          optionId: OptionId.make("implement_plan")
        })
      )
      await log.waitFor("turn.completed", (e) => e.turnId === implemented, { ms: 30_000 })
    }
  }
}
