import type { ProviderInfo } from "@planbridge/contracts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { screenshot, send, startSession, startWebRig, type WebRig } from "./support/webRig.ts"

/**
 * The web client in Chromium against the real server in demo mode, with the real Claude Agent
 * SDK (its model scripted on loopback): a multi-select question card answered by keyboard, then a
 * proposed plan edited and approved. Controls follow each provider's capabilities.
 */
let rig: WebRig
const started = Date.now()
const CLAUDE = "Claude (demo)"

beforeAll(async () => {
  rig = await startWebRig()
}, 120_000)

afterAll(async () => {
  await rig?.close()
  console.info(`webClient.claude.test.ts wall time: ${Date.now() - started} ms`)
})

describe("web client with the real Claude Agent SDK", () => {
  it("without a token in the address the page asks for one; a wrong one is refused and forgotten", async () => {
    const context = await rig.browser.newContext()
    try {
      const page = await context.newPage()
      await page.goto(`${rig.server.url}/`)
      const field = page.getByLabel("Access token")
      await field.fill("not-the-token")
      await page.getByRole("button", { name: "Connect" }).click()
      await page.locator(".token-screen .error", { hasText: "unauthorized" }).waitFor({ timeout: 30_000 })
      expect(await page.evaluate("Object.keys(sessionStorage)")).toEqual([])
      await field.fill(rig.server.token)
      await page.getByRole("button", { name: "Connect" }).click()
      await page.locator(".provider").first().waitFor({ timeout: 30_000 })
      expect(page.url()).toBe(`${rig.server.url}/`)
    } finally {
      await context.close()
    }
  })

  it("the picker offers each provider by its capabilities, never by its name", async () => {
    const tab = await rig.open()
    await tab.page.locator(".provider").first().waitFor()
    const welcome = JSON.parse(tab.received[0]![0]!) as { type: string; providers: ReadonlyArray<ProviderInfo> }
    expect(welcome.type).toBe("welcome")
    expect(welcome.providers.length).toBeGreaterThanOrEqual(2)
    for (const p of welcome.providers) {
      const card = tab.page.locator(`.provider[data-provider="${p.provider}"]`)
      await expect(card.getByRole("button").textContent()).resolves.toBe(
        p.capabilities.supportsPlanMode ? "Start a plan session" : "Start a session"
      )
      expect(await card.locator(".badge-demo").count()).toBe(p.demo === true ? 1 : 0)
    }
    // Every control on screen is the one its provider's capabilities call for (the demo's
    // providers all plan now: codex-acp 2.6 through its `collaboration_mode` option).
    const labels = await tab.page.locator(".provider button").allTextContents()
    const expected = welcome.providers.map((p) =>
      p.capabilities.supportsPlanMode ? "Start a plan session" : "Start a session"
    )
    expect(labels.sort()).toEqual(expected.sort())
    await screenshot(tab, "01-providers")
  })

  it("a multi-select question answered by keyboard; the proposed plan edited and approved", async () => {
    const tab = await rig.open()
    const { page } = tab
    await startSession(tab, CLAUDE, rig.cwd)
    await send(tab, "Ask me a question, then plan the service")
    const card = page.locator(".question-card:not(.resolved)")
    await card.waitFor({ timeout: 90_000 })
    const extras = page.locator(`fieldset.question`, { hasText: "Which extras should it have?" })
    expect(await extras.locator(`input[type="checkbox"]`).count()).toBe(3)
    await page.locator(`fieldset.question`, { hasText: "Which language" }).focus()
    await page.keyboard.press("2")
    await extras.focus()
    await page.keyboard.press("1")
    await page.keyboard.press("3")
    await screenshot(tab, "02-question-card")
    await page.getByRole("button", { name: "Submit" }).click()
    const resolved = page.locator(".question-card.resolved")
    await resolved.waitFor({ timeout: 30_000 })
    expect(await resolved.locator("dd").allTextContents()).toEqual(["Go", "Logging, Docker"])

    // Claude can exit plan mode: approve, edit or reject, and no "implement" shortcut.
    const plan = page.locator(".plan-card")
    await plan.locator("h1", { hasText: "Plan: a small greeting service" }).waitFor({ timeout: 90_000 })
    await plan.getByRole("button", { name: "Approve", exact: true }).waitFor()
    expect(await plan.getByRole("button", { name: "Reject…" }).count()).toBe(1)
    expect(await plan.getByRole("button", { name: "Implement this plan" }).count()).toBe(0)
    await screenshot(tab, "03-proposed-plan")
    await plan.getByRole("button", { name: "Edit…" }).click()
    const editor = plan.getByLabel("Edited plan")
    const original = await editor.inputValue()
    expect(original).toContain("Add a unit test for `greet`.")
    await editor.fill(`${original}4. Add a README.\n`)
    await plan.getByRole("button", { name: "Approve with edits" }).click()

    await plan.locator(".badge", { hasText: "approved with edits" }).waitFor({ timeout: 30_000 })
    await plan.locator("li", { hasText: "Add a README." }).waitFor()
    await page.locator(".item-assistant_message", { hasText: "The plan is approved" }).waitFor({ timeout: 60_000 })
    // The model was given the edited plan as the accepted one.
    expect(JSON.stringify(rig.demo.models.claude.requests)).toContain("4. Add a README.")
    await screenshot(tab, "04-plan-approved")
    // Under the server's strict CSP the page ran without a single error.
    expect(tab.errors).toEqual([])
  })
})
