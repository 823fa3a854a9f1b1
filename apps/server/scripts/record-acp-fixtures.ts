/**
 * Records the ACP fixtures: drives real sessions (the scripted Cursor agent, the real codex-acp
 * and claude-agent-acp against scripted models on loopback), taps both stdio directions into
 * `fixtures/<dir>/<name>.jsonl`, checks that replaying the transcript reproduces exactly the
 * events the live session emitted (ids and times aside), and writes that replay as the golden
 * `fixtures/<dir>/<name>.events.jsonl`. The Zed-era wrappers (`codex`, `claude`) run from their
 * `@zed-industries` packages; the current ones (`codex-2.6`, `claude-0.101`) are the
 * `@agentclientprotocol` packages behind `node_modules/.bin`.
 *
 *   bash scripts/in-loopback-netns.sh node apps/server/bin/run-ts.mjs apps/server/scripts/record-acp-fixtures.ts [which]
 */
import { OptionId, QuestionId, ThreadId } from "@planbridge/contracts"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { makeAcpAdapter } from "../src/provider/acp/AcpAdapter.ts"
import type { AcpProfile } from "../src/provider/acp/AcpProfile.ts"
import { claudeAcpProfile } from "../src/provider/acp/profiles/claudeAcp.ts"
import { codexAcpProfile } from "../src/provider/acp/profiles/codexAcp.ts"
import { cursorProfile } from "../src/provider/acp/profiles/cursor.ts"
import { saveFixture } from "./fixtureRecording.ts"
import { replayScope } from "../src/provider/kernel/ids.ts"
import { makeTranscriptWriter } from "../src/provider/kernel/transcript.ts"
import { openSession, run, type OpenSession } from "../test/provider/acp/harness.ts"
import { claudeEnv, writeCodexHome } from "../test/provider/acp/peers.ts"
import { planFilePath } from "../test/provider/claude/greetingPlan.ts"
import { askTwoQuestions, planReply } from "../test/provider/codex/realPeerSupport.ts"
import { assertLoopbackOnly } from "../test/support/loopbackOnly.ts"
import { startMockMessagesModel, type ScriptedResponse as MessagesTurn } from "../test/support/mockMessagesModel.ts"
import { startMockResponsesModel, type ScriptedResponse as ResponsesTurn } from "../test/support/mockResponsesModel.ts"

const root = resolve(import.meta.dirname, "../../..")
const bin = (name: string) => resolve(root, "node_modules/.bin", name)
/** The Zed-era wrappers the first ACP fixtures were recorded with (still installed). */
const zedCodexAcp = resolve(root, "node_modules/@zed-industries/codex-acp/bin/codex-acp.js")
const zedClaudeAcp = resolve(root, "node_modules/@zed-industries/claude-agent-acp/dist/index.js")

interface Recording {
  readonly dir: "cursor" | "acp"
  readonly name: string
  readonly agent: string
  readonly profile: AcpProfile
  readonly env: Record<string, string | undefined>
  readonly cwd: string
  readonly mode: "default" | "plan"
  /** Replaced by `/scratch` in the written transcript (machine-specific temp paths). */
  readonly scratch: string
  readonly drive: (open: OpenSession) => Promise<void>
}

const record = async (recording: Recording): Promise<void> => {
  const threadId = ThreadId.make(`fixture-${recording.name}`)
  // Recorded in the replay's own scope, so that the live ids are the ones a replay gives.
  const idPrefix = replayScope(threadId)
  const recorder = makeTranscriptWriter({ provider: recording.profile.provider, agent: recording.agent, idPrefix })
  const adapter = makeAcpAdapter(recording.profile, {
    env: recording.env,
    tap: recorder.record,
    idPrefix: () => idPrefix
  })
  const open = await openSession(adapter, { threadId, cwd: recording.cwd, mode: recording.mode })
  try {
    await recording.drive(open)
  } finally {
    await open.close()
  }
  const exited = open.log.ofType("session.exited")[0]
  if (exited !== undefined) {
    const { exitKind, exitCode, signal } = exited.payload
    recorder.record({ dir: "local", msg: { kind: "exit", exitKind, exitCode, signal } })
  }

  await saveFixture({
    dir: recording.dir,
    name: recording.name,
    threadId,
    lines: recorder.lines(),
    live: open.log.events,
    anonymise: (text) => text.split(recording.scratch).join("/scratch")
  })
}

const cursorRecording = (scratch: string): Recording => ({
  dir: "cursor",
  name: "scripted-cursor-plan-question-permission-elicit-cancel",
  agent: "scripted-cursor 0.0.1 (apps/server/test/provider/acp/scriptedCursorAgent.ts)",
  profile: cursorProfile({
    command: bin("tsx"),
    args: [resolve(root, "apps/server/test/provider/acp/scriptedCursorAgent.ts")]
  }),
  env: { PATH: process.env.PATH, HOME: scratch, CURSOR_API_KEY: "fixture-key" },
  cwd: scratch,
  mode: "plan",
  scratch,
  drive: async ({ session, log }) => {
    let from = log.events.length
    const turn = await run(session.startTurn({ text: "SCENARIO:FULL" }))
    const asked = await log.waitFor("user-input.requested", () => true, { from })
    await run(
      session.respondToUserInput({
        promptId: asked.payload.prompt.promptId,
        answers: [
          { questionId: QuestionId.make("lang"), selectedOptionIds: [OptionId.make("ts")] },
          { questionId: QuestionId.make("extras"), selectedOptionIds: [OptionId.make("tests"), OptionId.make("docs")] }
        ]
      })
    )
    const proposed = await log.waitFor("plan.proposed.completed", () => true, { from })
    await run(session.decidePlan({ planId: proposed.payload.planId, decision: "approved" }))
    const approval = await log.waitFor("request.opened", (e) => e.payload.requestKind === "approval", { from })
    await run(session.respondToRequest(approval.payload.requestId, OptionId.make("allow-once")))
    await log.waitFor("turn.completed", (e) => e.turnId === turn)
    from = log.events.length
    const waiting = await run(session.startTurn({ text: "SCENARIO:WAIT_PERMISSION" }))
    await log.waitFor("request.opened", () => true, { from })
    await run(session.interrupt())
    await log.waitFor("turn.completed", (e) => e.turnId === waiting)
    from = log.events.length
    const elicit = await run(session.startTurn({ text: "SCENARIO:ELICIT" }))
    const form = await log.waitFor("user-input.requested", () => true, { from })
    await run(
      session.respondToUserInput({
        promptId: form.payload.prompt.promptId,
        answers: [
          { questionId: QuestionId.make("name"), text: "demo" },
          { questionId: QuestionId.make("size"), text: "3" },
          { questionId: QuestionId.make("lang"), selectedOptionIds: [OptionId.make("rs")] },
          { questionId: QuestionId.make("ci"), selectedOptionIds: [OptionId.make("true")] }
        ]
      })
    )
    await log.waitFor("turn.completed", (e) => e.turnId === elicit)
    const unknown = await run(session.startTurn({ text: "SCENARIO:UNKNOWN_EXTENSION" }))
    await log.waitFor("turn.completed", (e) => e.turnId === unknown)
  }
})

const codexRecording = (
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

const claudeRecording = (
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
 * codex-acp 2.6: plan mode through its `collaboration_mode` config option, the model's questions
 * as a form elicitation answered from the client, the plan as a `plan_update`, its review's
 * `revise_plan`, then a second plan's `implement_plan` (codex-acp leaves plan mode itself).
 */
const codexCurrentRecording = (
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

/**
 * claude-agent-acp 0.101: plan mode, AskUserQuestion answered as a card, TodoWrite, the plan
 * written to the CLI's plan file and ExitPlanMode's own options (`exit-plan-default` chosen), the
 * approved plan's `plan_update`, then a Bash permission allowed once.
 */
const claudeCurrentRecording = (
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

const main = async () => {
  assertLoopbackOnly()
  const only = process.argv[2]
  const scratches: Array<string> = []
  const scratch = (tag: string) => {
    const dir = mkdtempSync(join(tmpdir(), `planbridge-record-${tag}-`))
    scratches.push(dir)
    return dir
  }
  const responses = await startMockResponsesModel()
  const messages = await startMockMessagesModel()
  try {
    if (only === undefined || only === "cursor") await record(cursorRecording(scratch("cursor")))
    if (only === undefined || only === "codex") {
      await record(codexRecording(scratch("codex"), responses.baseUrl, (turns) => responses.script(...turns)))
    }
    if (only === undefined || only === "claude") {
      await record(claudeRecording(scratch("claude"), messages.baseUrl, (turns) => messages.script(...turns)))
    }
    if (only === undefined || only === "codex-2.6") {
      await record(
        codexCurrentRecording(scratch("codex-2.6"), responses.baseUrl, (turns) => responses.script(...turns))
      )
    }
    if (only === undefined || only === "claude-0.101") {
      await record(
        claudeCurrentRecording(scratch("claude-0.101"), messages.baseUrl, (turns) => messages.script(...turns))
      )
    }
  } finally {
    await responses.close()
    await messages.close()
    for (const dir of scratches) rmSync(dir, { recursive: true, force: true })
  }
}

await main()
