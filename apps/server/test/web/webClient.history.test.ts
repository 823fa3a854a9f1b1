import type { ThreadSnapshot } from "@planbridge/contracts"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { SNAPSHOT_THRESHOLD } from "../../src/ws/ThreadFeed.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { screenshot, startWebRig, type WebRig } from "./support/webRig.ts"

/**
 * A long thread in the web client, in Chromium against the real server: the page gets the
 * snapshot window (the latest turns), says how many turns came before, and loads them a page
 * at a time on request until the timeline holds the whole thread.
 */
let rig: WebRig
beforeAll(async () => {
  rig = await startWebRig()
}, 120_000)
afterAll(async () => {
  await rig?.close()
})

/** What the timeline renders of a thread (Timeline.tsx): its entries, plan items beside their cards left out. */
const timelineEntries = (t: ThreadSnapshot): number => {
  const turnsWithPlans = new Set(t.proposedPlans.map((p) => p.turnId as string))
  return (
    t.items.filter((i) => !(i.itemType === "plan" && turnsWithPlans.has(i.turnId))).length +
    t.prompts.length +
    t.proposedPlans.length +
    t.requests.filter((r) => r.promptId === null && !(r.kind === "plan_approval" && r.planId !== null)).length
  )
}

describe("web client: a long thread's older turns", { timeout: 240_000 }, () => {
  it("shows the latest turns, then older ones page by page on request, until the whole thread", async () => {
    // Longer than what a subscribe from the start replays: the page gets a snapshot window.
    const events = generateEventMix({ seed: 91, count: SNAPSHOT_THRESHOLD + 1_000, threads: 1, prefix: "web-hist" })
    const threadId = events[0]!.threadId
    for (let i = 0; i < events.length; i += 1_000)
      await rig.server.runtime.runPromise(
        Effect.gen(function* () {
          yield* (yield* RuntimeIngestion).ingestAll(events.slice(i, i + 1_000))
        })
      )
    const res = await fetch(`${rig.server.url}/api/threads/${threadId}`, {
      headers: { authorization: `Bearer ${rig.server.token}` }
    })
    const whole = (await res.json()) as ThreadSnapshot
    expect(whole.turns.length).toBeGreaterThan(40)

    const tab = await rig.open()
    const { page } = tab
    await page.locator(`button.thread[data-thread="${threadId}"]`).click()
    const view = page.locator(`.thread-view[data-thread="${threadId}"]`)
    const older = view.getByTestId("older-turns")
    await older.waitFor({ timeout: 30_000 })
    // The window: the latest 20 turns, the marker naming the oldest of them.
    expect(await older.getAttribute("data-before")).toBe(whole.turns.at(-20)!.turnId)
    const entries = view.locator(".timeline > *")
    const inWindow = await entries.count()
    expect(inWindow).toBeGreaterThan(0)
    expect(inWindow).toBeLessThan(timelineEntries(whole))
    await screenshot(tab, "20-older-turns")

    // One page on request: the older turns' entries appear above, and fewer turns remain before.
    await older.getByRole("button", { name: "Load older turns" }).click()
    await expect.poll(() => entries.count(), { timeout: 30_000 }).toBeGreaterThan(inWindow)
    expect(await older.getAttribute("data-before")).toBe(whole.turns.at(-40)!.turnId)
    const asked = tab.sent.flat().filter((text) => text.includes('"thread.history"'))
    expect(asked).toHaveLength(1)

    // On to the thread's start: then the timeline holds everything the thread has.
    while ((await older.count()) > 0) {
      const before = await entries.count()
      await older.getByRole("button", { name: "Load older turns" }).click()
      await expect.poll(() => entries.count(), { timeout: 30_000 }).toBeGreaterThan(before)
    }
    expect(await entries.count()).toBe(timelineEntries(whole))
    expect(tab.errors).toEqual([])
  })
})
