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
import { OptionId, QuestionId } from "@planbridge/contracts"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { cursorProfile } from "../src/provider/acp/profiles/cursor.ts"
import { run } from "../test/provider/acp/harness.ts"
import { assertLoopbackOnly } from "../test/support/loopbackOnly.ts"
import { startMockMessagesModel } from "../test/support/mockMessagesModel.ts"
import { startMockResponsesModel } from "../test/support/mockResponsesModel.ts"
import { type Recording, bin, record, root } from "./acpRecording.ts"
import { codexCurrentRecording, codexRecording } from "./acpCodexRecordings.ts"
import { claudeCurrentRecording, claudeRecording } from "./acpClaudeRecordings.ts"

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
