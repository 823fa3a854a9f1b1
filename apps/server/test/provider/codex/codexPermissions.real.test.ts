import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { ThreadState, type OptionId, type RuntimeEvent, type ThreadId } from "@planbridge/contracts"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { codexUserConfig, tempDirs, writeFiles } from "../../support/fixtureHomes.ts"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import { startMockResponsesModel, type MockResponsesModel } from "../../support/mockResponsesModel.ts"
import { withCodexHarness, type CodexHarness } from "./harness.ts"
import { ofType, PLAN_MARKDOWN, planReply } from "./realPeerSupport.ts"

/**
 * Codex's approval policy and sandbox under Planbridge, against the real `codex app-server`
 * 0.171.0 (only the model is scripted): plan turns run read-only, default turns with the user's
 * own settings or Planbridge's documented default (`on-request` + `workspace-write`), so an
 * approved plan is implemented with its file changes and commands asked for through Planbridge;
 * `session.configured` says what was set and why.
 */

beforeAll(() => assertLoopbackOnly())
const dirs = tempDirs()
afterAll(() => dirs.removeAll())

/** `apply_patch` as the model may run it through the shell (Codex turns it into a file change). */
const addFile = (path: string, line: string) => ({
  type: "function_call" as const,
  name: "exec_command",
  arguments: {
    cmd: `apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: ${path}\n+${line}\n*** End Patch\nEOF\n`,
    tty: false
  }
})
const command = (cmd: string, escalated: boolean) => ({
  type: "function_call" as const,
  name: "exec_command",
  arguments: {
    cmd,
    tty: false,
    ...(escalated ? { sandbox_permissions: "require_escalated", justification: "Record that the plan is done" } : {})
  }
})

/** The `turn/start` requests the session sent, in order. */
const turnStarts = (h: CodexHarness) =>
  h.traffic.flatMap(({ entry }) => {
    const msg = entry.msg as { method?: string; params?: Record<string, unknown> }
    return entry.dir === "out" && msg.method === "turn/start" ? [msg.params ?? {}] : []
  })

const approvals = (events: ReadonlyArray<RuntimeEvent>) =>
  ofType(events, "request.opened").map((e) => [e.payload.native.method, e.payload.command, e.payload.cwd])

describe("Codex permissions follow the mode", () => {
  it("a plan approved and then implemented: the file change and the command asked for, answered and made", async () => {
    // Outside the workspace and outside /tmp (which workspace-write may write): the change must be asked for.
    const outside = mkdtempSync("/var/tmp/planbridge-codex-outside-")
    try {
      await withCodexHarness({ mode: "plan", threadId: "thread-implement" as ThreadId }, (h) =>
        Effect.gen(function* () {
          h.mock.script(
            { output: [planReply] },
            { output: [addFile("src/service.txt", "the service")] },
            { output: [addFile(`${outside}/NOTES.md`, "implemented")] },
            { output: [command("echo implemented > DONE.txt", true)] },
            { output: [{ type: "text", text: "The plan is implemented." }] }
          )
          const configured = yield* h.waitForEvent("session.configured")
          expect(configured.payload.permissions).toEqual([
            {
              mode: "default",
              approvalPolicy: "on-request",
              approvalPolicySource: "planbridge_default",
              sandbox: "workspace-write",
              sandboxSource: "planbridge_default",
              reason:
                "Approval policy on-request from Planbridge's default, sandbox workspace-write from Planbridge's default."
            },
            {
              mode: "plan",
              approvalPolicy: "on-request",
              approvalPolicySource: "planbridge_default",
              sandbox: "read-only",
              sandboxSource: "mode",
              reason:
                "Plan mode runs read-only so planning changes nothing; approval policy on-request from Planbridge's default."
            }
          ])

          const planTurn = yield* h.session.startTurn({ text: "Plan a small HTTP service for me." })
          const plan = yield* h.waitForEvent("plan.proposed.completed")
          expect(plan.payload.markdown).toBe(PLAN_MARKDOWN)
          yield* h.waitForEvent("turn.completed", (e) => e.turnId === planTurn)

          // Approved the way Codex's own TUI does it: the next turn, in default mode, implements it.
          const implement = yield* h.session.startTurn({ text: "Implement the plan.", mode: "default" })
          const fileChange = yield* h.waitForEvent(
            "request.opened",
            (e) => e.payload.native.method === "item/fileChange/requestApproval"
          )
          expect(fileChange.turnId).toBe(implement)
          yield* h.session.respondToRequest(fileChange.payload.requestId, "accept" as OptionId)
          const run = yield* h.waitForEvent(
            "request.opened",
            (e) => e.payload.native.method === "item/commandExecution/requestApproval"
          )
          // The command and where it runs, structured (issue 27's leftover).
          expect(run.payload).toMatchObject({ command: "/bin/bash -lc 'echo implemented > DONE.txt'", cwd: h.cwd })
          yield* h.session.respondToRequest(run.payload.requestId, "accept" as OptionId)
          const done = yield* h.waitForEvent("turn.completed", (e) => e.turnId === implement)
          expect(done.payload.status).toBe("completed")

          // Made: the workspace file without asking (workspace-write), the rest once answered.
          expect(readFileSync(join(h.cwd, "src/service.txt"), "utf8")).toBe("the service\n")
          expect(readFileSync(join(outside, "NOTES.md"), "utf8")).toBe("implemented\n")
          expect(readFileSync(join(h.cwd, "DONE.txt"), "utf8")).toBe("implemented\n")
          expect(approvals(h.events)).toEqual([
            ["item/fileChange/requestApproval", undefined, undefined],
            ["item/commandExecution/requestApproval", "/bin/bash -lc 'echo implemented > DONE.txt'", h.cwd]
          ])
          expect(ofType(h.events, "request.resolved").map((e) => [e.payload.resolution, e.payload.optionId])).toEqual([
            ["responded", "accept"],
            ["responded", "accept"]
          ])

          // Each turn carried its mode's permissions: plan read-only, default the workspace sandbox.
          expect(turnStarts(h).map((p) => [p.approvalPolicy, (p.sandboxPolicy as { type: string }).type])).toEqual([
            ["on-request", "readOnly"],
            ["on-request", "workspaceWrite"]
          ])

          // A client's fold shows the command and its directory on the approval card.
          const state = ThreadState.empty("thread-implement", "codex")
          h.events.forEach((event, index) => state.apply(index + 1, event))
          const card = state.toSnapshot().requests.find((r) => r.requestId === run.payload.requestId)
          expect(JSON.parse(card?.detail ?? "null")).toEqual({
            command: "/bin/bash -lc 'echo implemented > DONE.txt'",
            cwd: h.cwd,
            reason: "Record that the plan is done"
          })
        })
      )
    } finally {
      rmSync(outside, { recursive: true, force: true })
    }
  })
})

describe("Codex in user mode keeps the user's own approval policy", () => {
  let mock: MockResponsesModel
  beforeAll(async () => {
    mock = await startMockResponsesModel()
  })
  afterAll(async () => {
    await mock?.close()
  })

  it("the user's granular approval_policy is kept: sandbox escalations refused by Codex, never asked", async () => {
    const codexHome = dirs.make("codex-user-home")
    const project = dirs.make("codex-user-project")
    // The user lets MCP servers and rules ask, but refuses every sandbox escalation outright.
    const policy =
      "approval_policy = { granular = { sandbox_approval = false, rules = true, mcp_elicitations = true } }"
    writeFiles(codexHome, {
      "config.toml": `${policy}\n${codexUserConfig(mock.baseUrl, project)}`,
      "auth.json": JSON.stringify({ OPENAI_API_KEY: "sk-fixture-user", tokens: null, last_refresh: null })
    })
    const userEnv = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: dirs.make("codex-user-os-home"),
      CODEX_HOME: codexHome
    }
    await withCodexHarness({ mode: "default", userEnv, cwd: project, mock }, (h) =>
      Effect.gen(function* () {
        h.mock.script(
          { output: [command("echo escalated > USER.txt", true)] },
          { output: [{ type: "text", text: "Not allowed, then." }] }
        )
        const configured = yield* h.waitForEvent("session.configured")
        expect(configured.payload.permissions?.[0]).toEqual({
          mode: "default",
          approvalPolicy: "granular",
          approvalPolicySource: "user_config",
          sandbox: "workspace-write",
          sandboxSource: "planbridge_default",
          reason:
            "Approval policy granular from your Codex configuration (user layer), sandbox workspace-write from Planbridge's default."
        })
        yield* h.session.startTurn({ text: "Write my file." })
        yield* h.waitForEvent("turn.completed")
        // Under Planbridge's default (on-request) this escalation would be asked for: the user's policy refuses it.
        expect(ofType(h.events, "request.opened")).toEqual([])
        expect(existsSync(join(project, "USER.txt"))).toBe(false)
        const sent = turnStarts(h)[0]?.approvalPolicy
        expect(sent).toEqual({
          granular: {
            sandbox_approval: false,
            rules: true,
            mcp_elicitations: true,
            request_permissions: false,
            skill_approval: false
          }
        })
      })
    )
  })
})
