import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { screenshot, send, startSession, startWebRig, type WebRig } from "./support/webRig.ts"

/**
 * The web client in Chromium against the real server in demo mode with the real claude-agent-acp
 * (its model scripted on loopback). Issue 27: the plan card offers only the decisions the
 * session's capabilities say it takes (claude-agent-acp's plan is a permission request: approve
 * or reject, no edits, no feedback), and an ACP thread shows the user's own messages.
 */
let rig: WebRig
const started = Date.now()
const CLAUDE_ACP = "claude-agent-acp (demo)"

beforeAll(async () => {
  rig = await startWebRig()
}, 120_000)

afterAll(async () => {
  await rig?.close()
  console.info(`webClient.acp.test.ts wall time: ${Date.now() - started} ms`)
})

describe("web client with the real claude-agent-acp", { timeout: 240_000 }, () => {
  it("the plan card offers Approve and Reject only; the user's message is in the timeline", async () => {
    const tab = await rig.open()
    const { page } = tab
    await startSession(tab, CLAUDE_ACP, rig.cwd)
    await send(tab, "Propose a plan for the service.")
    // The user's own message, as on every other provider.
    await page
      .locator(".item-user_message", { hasText: "Propose a plan for the service." })
      .waitFor({ timeout: 90_000 })

    const plan = page.locator(".plan-card")
    await plan.locator("h1", { hasText: "Plan: a small greeting service" }).waitFor({ timeout: 90_000 })
    await plan.getByRole("button", { name: "Approve", exact: true }).waitFor()
    // Nothing the agent would refuse `unsupported`: no edit, no rejection with feedback.
    expect(await plan.getByRole("button").allTextContents()).toEqual(["Approve", "Reject"])
    // The provider's own plan file is not shown.
    expect(await plan.textContent()).not.toContain(".claude/plans")
    await screenshot(tab, "20-acp-plan-card")
    await plan.getByRole("button", { name: "Approve", exact: true }).click()
    await plan.locator(".badge", { hasText: "approved" }).waitFor({ timeout: 60_000 })
    await page.locator(".item-assistant_message", { hasText: "The plan is approved" }).waitFor({ timeout: 90_000 })
    expect(tab.errors).toEqual([])
  })
})
