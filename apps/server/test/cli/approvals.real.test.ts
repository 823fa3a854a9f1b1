import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PendingRequestList } from "../../src/cli/promptsApi.ts"
import { DEMO_COMMAND, DEMO_COMMAND_FILE } from "../../src/demo/scenarios.ts"
import { startDemoRig, STEP_MS, type DemoRig } from "../demo/demoRig.ts"
import { runCli } from "./support/runCli.ts"

/**
 * Issue 27: an operator lists and answers approvals and plan decisions from the CLI and the HTTP
 * API, not only questions. Against the real server in demo mode with the real Claude Agent SDK
 * (its model scripted on loopback): a command approval answered with `prompts respond`, a plan
 * rejected with feedback by `prompts decide`, each seen first in `prompts approvals`.
 */
let rig: DemoRig
beforeAll(async () => {
  rig = await startDemoRig()
}, STEP_MS)
afterAll(async () => {
  await rig?.close()
})

const prompts = (...args: ReadonlyArray<string>) =>
  runCli("prompts", ...args, "--url", rig.server.url, "--data-dir", rig.dataDir)
const pending = async (threadId: string) => {
  const run = await prompts("approvals", "--thread", threadId, "--json")
  expect(run.code).toBe(0)
  return Schema.decodeUnknownSync(PendingRequestList)(JSON.parse(run.stdout)).requests
}

describe("operator approvals and plan decisions (CLI, HTTP)", { timeout: STEP_MS * 4 }, () => {
  it("a command approval: listed with its command and options, answered with `prompts respond`", async () => {
    const { threadId, cwd } = await rig.session("claude", "default")
    await rig.ok({ type: "turn.start", threadId: threadId as never, text: "run the command" })
    await rig.waitFor("request.opened", threadId)
    const [approval, ...more] = await pending(threadId)
    expect(more).toEqual([])
    expect(approval).toMatchObject({ threadId, provider: "claude", kind: "approval", plan: null })
    expect(approval!.detail).toContain(DEMO_COMMAND.slice(0, 20))
    const text = await prompts("approvals", "--thread", threadId)
    expect(text.stdout).toContain(approval!.requestId)
    expect(text.stdout).toContain("options: allow (Allow), deny (Deny)")

    const answered = await prompts("respond", approval!.requestId, "--option", "allow")
    expect(answered).toMatchObject({ code: 0, stdout: `responded ${approval!.requestId} with allow\n`, stderr: "" })
    await rig.waitFor("turn.completed", threadId)
    expect(readFileSync(join(cwd, DEMO_COMMAND_FILE), "utf8")).toBe("hello from the Planbridge demo\n")
    expect(await pending(threadId)).toEqual([])
    // A second answer is refused, by its code.
    const again = await prompts("respond", approval!.requestId, "--option", "allow")
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/^planbridge prompts respond: already_resolved: /)
  })

  it("a plan decision: listed with the plan and what it takes, rejected with feedback by `prompts decide`", async () => {
    const { threadId } = await rig.session("claude", "plan")
    await rig.ok({ type: "turn.start", threadId: threadId as never, text: "Propose a plan." })
    await rig.waitFor("plan.proposed.completed", threadId)
    const [decision] = await pending(threadId)
    expect(decision).toMatchObject({ kind: "plan_approval", provider: "claude" })
    expect(decision!.plan).toMatchObject({ supportsEdits: true, supportsFeedback: true })
    expect(decision!.plan!.markdown).toContain("Plan: a small greeting service")
    const planId = decision!.plan!.planId

    const rejected = await prompts(
      "decide",
      planId,
      "--thread",
      threadId,
      "--decision",
      "rejected",
      "--feedback",
      "smaller steps, please"
    )
    expect(rejected).toMatchObject({ code: 0, stdout: `rejected ${planId}\n`, stderr: "" })
    const recorded = await rig.waitFor("plan.decision", threadId)
    expect(recorded.event.type === "plan.decision" && recorded.event.payload).toMatchObject({
      decision: "rejected",
      feedback: "smaller steps, please"
    })
    await rig.waitFor("turn.completed", threadId)
    // The model was told why.
    expect(JSON.stringify(rig.demo.models.claude.requests.at(-1))).toContain("smaller steps, please")
  })

  it("the HTTP API refuses a bad body by its path, and an unknown request by its code", async () => {
    const post = (path: string, body: unknown) =>
      fetch(`${rig.server.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${rig.server.token}`, "content-type": "application/json" },
        body: JSON.stringify(body)
      })
    const bad = await post("/api/requests/some-request/respond", { optionId: 7 })
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain('["optionId"]')
    const unknown = await post("/api/requests/no-such-request/respond", { optionId: "allow" })
    expect(unknown.status).toBe(404)
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe("unknown_request")
    const unauthorized = await fetch(`${rig.server.url}/api/requests`)
    expect(unauthorized.status).toBe(401)
  })
})
