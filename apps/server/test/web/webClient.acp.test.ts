import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { screenshot, send, startSession, startWebRig, type WebRig } from "./support/webRig.ts"

/**
 * The web client in Chromium against the real server in demo mode with the real claude-agent-acp
 * (its model scripted on loopback). Issue 27: the plan card offers only the decisions the
 * session's capabilities say it takes (claude-agent-acp's plan is a permission request: its own
 * review options, no edits, no feedback), and an ACP thread shows the user's own messages.
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
  it("the plan card offers the agent's own review choices; the user's message is in the timeline", async () => {
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
    const approve = plan.getByRole("button", { name: "Yes, manually approve edits", exact: true })
    await approve.waitFor()
    // The agent's own review choices (claude-agent-acp 0.101's ExitPlanMode options), as it labels
    // them; nothing it would refuse `unsupported`: no edit, no rejection with feedback.
    const buttons = await plan.getByRole("button").allTextContents()
    expect(buttons).toEqual(
      expect.arrayContaining(["Yes, manually approve edits", "Yes, and use auto mode", "No, keep planning"])
    )
    expect(buttons.filter((b) => b.startsWith("Edit") || b.startsWith("Reject"))).toEqual([])
    // The provider's own plan file is not shown.
    expect(await plan.textContent()).not.toContain(".claude/plans")
    await screenshot(tab, "20-acp-plan-card")
    await approve.click()
    await plan.locator(".badge", { hasText: "approved" }).waitFor({ timeout: 60_000 })
    await page.locator(".item-assistant_message", { hasText: "The plan is approved" }).waitFor({ timeout: 90_000 })
    expect(tab.errors).toEqual([])
  })
})
