import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEMO_COMMAND } from "../../src/demo/scenarios.ts"
import { crashProviders } from "../support/resumeRig.ts"
import type { Locator } from "playwright-core"
import { screenshot, send, startSession, startWebRig, type Tab, type WebRig } from "./support/webRig.ts"

/**
 * Issue 27 in Chromium, against the real server in demo mode with the real Claude Agent SDK (its
 * model scripted on loopback): the question panel driven by the keyboard alone (focus, 1–9,
 * auto-advance, n/m, Enter, a draft that survives a reload, a refused empty Submit), and the
 * smaller faults: a skipped card keeps its questions, the composer says a plan decision waits,
 * long unbroken text stays inside its card, an approval shows its command as a command, a
 * provider's death reads in words and leaves no tool "inProgress".
 */
let rig: WebRig
const started = Date.now()
const CLAUDE = "Claude (demo)"

beforeAll(async () => {
  rig = await startWebRig()
}, 120_000)

afterAll(async () => {
  await rig?.close()
  console.info(`webClient.prompts.test.ts wall time: ${Date.now() - started} ms`)
})

/** The `data-question` of the focused element, or its text when it is no question. */
const focused = (tab: Tab) =>
  tab.page.evaluate<string | null>(
    "document.activeElement?.getAttribute('data-question') ?? document.activeElement?.textContent ?? null"
  )
/**
 * Waits until `expression` holds in the page. Polled from here: the page's CSP refuses the
 * string evaluation that Playwright's own in-page polling (`waitForFunction`) would need.
 */
const until = (tab: Tab, expression: string) =>
  expect.poll(() => tab.page.evaluate<boolean>(expression), { timeout: 30_000, interval: 100 }).toBe(true)
const checked = async (inputs: Locator) => Promise.all((await inputs.all()).map((i) => i.isChecked()))

const sentCommands = (tab: Tab, type: string) =>
  tab.sent
    .flat()
    .map((t) => JSON.parse(t) as { type: string; command?: { type: string } })
    .filter((f) => f.type === "command" && f.command?.type === type).length

describe("web client: prompts by keyboard, and what a prompt UI must not get wrong", { timeout: 300_000 }, () => {
  it("the question panel by keyboard alone: focus, n/m, refused empty Submit, 1–9, auto-advance, reload, Enter", async () => {
    const tab = await rig.open()
    const { page } = tab
    const threadId = await startSession(tab, CLAUDE, rig.cwd)
    // The thread has an address of its own.
    expect(new URL(page.url()).searchParams.get("thread")).toBe(threadId)
    await send(tab, "Ask me a question, then plan the service")
    const card = page.locator(".question-card:not(.resolved)")
    await card.waitFor({ timeout: 90_000 })
    // The thread is named by its first message, with where it works.
    const header = page.locator(".thread-header")
    expect(await header.locator("h2").textContent()).toBe("Ask me a question, then plan the service")
    expect(await header.locator(".thread-cwd").textContent()).toBe(rig.cwd)
    const ids = await card
      .locator("fieldset.question")
      .evaluateAll((fs) => fs.map((f) => f.getAttribute("data-question")))
    expect(ids).toHaveLength(2)
    // The card took the focus: its first question.
    await until(tab, `document.activeElement?.getAttribute("data-question") === ${JSON.stringify(ids[0])}`)
    expect(await card.locator(".counter").allTextContents()).toEqual(["1/2", "2/2"])

    // Enter on an untouched card sends nothing and says why.
    await page.keyboard.press("Enter")
    await card.locator(".form-error", { hasText: "Which language" }).waitFor()
    expect(sentCommands(tab, "userInput.respond") + sentCommands(tab, "userInput.dismiss")).toBe(0)

    // 2 picks the second language and moves on; 1 picks the first extra (a multi-select stays).
    await page.keyboard.press("2")
    expect(await focused(tab)).toBe(ids[1])
    await page.keyboard.press("1")
    await screenshot(tab, "30-question-keyboard")

    // A reload reopens the thread from its address and keeps the draft; the focus goes to Submit.
    await page.reload()
    const again = page.locator(".question-card:not(.resolved)")
    await again.waitFor({ timeout: 60_000 })
    await until(tab, `document.activeElement?.textContent === "Submit"`)
    expect(await checked(again.locator('input[type="radio"]'))).toEqual([false, true])
    expect(await checked(again.locator('input[type="checkbox"]'))).toEqual([true, false, false])
    await page.keyboard.press("Enter")
    const resolved = page.locator(".question-card.resolved")
    await resolved.waitFor({ timeout: 30_000 })
    expect(await resolved.locator("dd").allTextContents()).toEqual(["Go", "Logging"])

    // While the plan waits for a decision the composer says so, not "The agent is working."
    const plan = page.locator(".plan-card")
    await plan.getByRole("button", { name: "Approve", exact: true }).waitFor({ timeout: 90_000 })
    await expect(page.locator(".composer-reason").textContent()).resolves.toBe(
      "The agent waits for your decision on its plan above."
    )
    expect(await plan.textContent()).not.toContain(".claude/plans")
    await plan.getByRole("button", { name: "Approve", exact: true }).click()
    await page.locator(".item-assistant_message", { hasText: "The plan is approved" }).waitFor({ timeout: 60_000 })
    await page.locator(".composer-reason").waitFor({ state: "detached", timeout: 60_000 })

    // Long unbroken text wraps inside its card: nothing is wider than the timeline.
    const long = `see-${"0123456789abcdef".repeat(40)}`
    await send(tab, long)
    const item = page.locator(".item-user_message", { hasText: long.slice(0, 40) })
    await item.waitFor({ timeout: 60_000 })
    const widths = await page.locator(".timeline").evaluate((timeline) => ({
      timeline: timeline.clientWidth,
      widest: Math.max(...[...timeline.querySelectorAll("*")].map((e) => e.scrollWidth))
    }))
    expect(widths.widest).toBeLessThanOrEqual(widths.timeline)
    await screenshot(tab, "31-long-text-wraps")

    // The timeline sticks to the bottom: on a short window, the agent's next reply is in view.
    await page.setViewportSize({ width: 1400, height: 420 })
    const replies = page.locator(".item-assistant_message")
    await page.locator(".composer-reason").waitFor({ state: "detached", timeout: 60_000 })
    const before = await replies.count()
    await send(tab, "hello again")
    await replies.nth(before).waitFor({ timeout: 60_000 })
    await until(tab, "(() => { const m = document.querySelector('.main'); return m.scrollHeight > m.clientHeight })()")
    await until(
      tab,
      "(() => { const m = document.querySelector('.main'); return m.scrollHeight - m.scrollTop - m.clientHeight < 2 })()"
    )
    await screenshot(tab, "33-stuck-to-bottom")
    expect(tab.errors).toEqual([])
  })

  it("a skipped card keeps its questions; an approval shows its command; a dead provider reads in words", async () => {
    const tab = await rig.open()
    const { page } = tab
    await startSession(tab, CLAUDE, rig.cwd)
    await send(tab, "Ask me a question")
    const card = page.locator(".question-card:not(.resolved)")
    await card.waitFor({ timeout: 90_000 })
    await card.getByRole("button", { name: "Skip" }).click()
    const skipped = page.locator(".question-card.resolved")
    await skipped.locator(".badge", { hasText: "skipped" }).waitFor({ timeout: 30_000 })
    expect(await skipped.locator("dt").count()).toBe(2)
    expect(await skipped.locator("dd").allTextContents()).toEqual(["not answered", "not answered"])

    // A command approval (Claude asks before a command in plan mode too): the command in a code block, no raw JSON.
    const second = await rig.open()
    await startSession(second, CLAUDE, rig.cwd)
    await send(second, "run the command")
    const approval = second.page.locator(".approval-card:not(.resolved)")
    await approval.waitFor({ timeout: 90_000 })
    expect(await approval.locator("pre.approval-command").textContent()).toBe(DEMO_COMMAND)
    expect(await approval.textContent()).not.toContain('{"command"')
    await screenshot(second, "32-approval-command")

    // The provider dies while it waits: the badge says so in words, and no tool is left running.
    expect(await crashProviders(rig.dataDir)).toBeGreaterThan(0)
    const closed = second.page.locator(".approval-card.resolved")
    await closed.waitFor({ timeout: 60_000 })
    expect(await closed.locator(".badge").first().textContent()).toBe("the agent stopped")
    await second.page.getByTestId("session-ended").waitFor({ timeout: 60_000 })
    const badges = await second.page.locator(".timeline .badge").allTextContents()
    expect(badges).not.toContain("inProgress")
    expect(badges).not.toContain("provider_exited")
    expect([...tab.errors, ...second.errors]).toEqual([])
  })
})
