import { resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAcpAdapter } from "../../src/provider/acp/AcpAdapter.ts"
import { cursorProfile } from "../../src/provider/acp/profiles/cursor.ts"
import { send, startSession, startWebRig, type WebRig } from "./support/webRig.ts"

/**
 * The URL prompt card (issue 28) in Chromium, against the project's scripted ACP agent (a child
 * process speaking ACP over stdio) offered beside the demo's providers: the card shows the
 * address as a link; Open is the person's consent (the agent is told `accept`, the page opens in
 * a new tab) and the card waits until the agent says the flow completed; Decline tells it
 * `decline`. Nothing typed on that page passes through Planbridge.
 */
const root = resolve(import.meta.dirname, "../../../..")
const profile = cursorProfile({
  command: resolve(root, "node_modules/.bin/tsx"),
  args: [resolve(import.meta.dirname, "../provider/acp/scriptedCursorAgent.ts")]
})
const LABEL = "Scripted ACP agent"
const URL = "https://login.example.test/acp?code=28"
let rig: WebRig
const started = Date.now()

beforeAll(async () => {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, CURSOR_API_KEY: "test-key" }
  rig = await startWebRig([
    { adapter: makeAcpAdapter(profile, { env }), capabilities: profile.capabilities, label: LABEL }
  ])
}, 120_000)

afterAll(async () => {
  await rig?.close()
  console.info(`webClient.urlPrompt.test.ts wall time: ${Date.now() - started} ms`)
})

/** A new session with the scripted agent, asked for its URL elicitation: the tab and the card. */
const urlCard = async () => {
  const tab = await rig.open()
  const { page } = tab
  await startSession(tab, LABEL, rig.cwd)
  await send(tab, "SCENARIO:ELICIT_URL")
  const card = page.locator(".url-prompt")
  await card.waitFor({ timeout: 60_000 })
  return { tab, page, card }
}

describe("web client: a URL prompt", { timeout: 240_000 }, () => {
  it("Open answers accept, opens the page, and the card resolves when the agent completes", async () => {
    const { tab, page, card } = await urlCard()
    expect(await card.locator("h3").textContent()).toContain("The agent asks you to open a page")
    expect(await card.locator(".prompt-url").getAttribute("href")).toBe(URL)
    expect(await card.textContent()).toContain("Log in to the fixture service")
    // The page opens in a tab of its own (served by the test: there is no network here).
    await page.context().route(`${URL}`, (route) => route.fulfill({ contentType: "text/html", body: "<p>log in</p>" }))
    const popup = page.context().waitForEvent("page")
    await card.getByRole("button", { name: "Open" }).click()
    const opened = await popup
    await opened.waitForLoadState()
    expect(opened.url()).toBe(URL)
    expect(await opened.textContent("p")).toBe("log in")
    // The agent got `accept`, then said the flow completed: the prompt resolved, answered here.
    await page
      .locator(".item-assistant_message", { hasText: 'RECEIVED elicitation/create {"action":"accept"}' })
      .waitFor({ timeout: 60_000 })
    const resolved = page.locator(".question-card.resolved")
    await resolved.waitFor({ timeout: 60_000 })
    expect(await resolved.locator(".badge").first().textContent()).toBe("answered")
    expect(await page.locator(".url-prompt").count()).toBe(0)
    expect(tab.errors).toEqual([])
  })

  it("Decline tells the agent decline and resolves the card at once", async () => {
    const { tab, page, card } = await urlCard()
    await card.getByRole("button", { name: "Decline" }).click()
    await page
      .locator(".item-assistant_message", { hasText: 'RECEIVED elicitation/create {"action":"decline"}' })
      .waitFor({ timeout: 60_000 })
    await page.locator(".question-card.resolved").waitFor({ timeout: 60_000 })
    expect(await page.locator(".url-prompt").count()).toBe(0)
    expect(tab.errors).toEqual([])
  })
})
