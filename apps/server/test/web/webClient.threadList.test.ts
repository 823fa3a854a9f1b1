import type { ServerFrame, ThreadId } from "@planbridge/contracts"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { connect, isEvent, type TestClient } from "../support/wsClient.ts"
import { screenshot, startWebRig, type WebRig } from "./support/webRig.ts"

/**
 * The thread list (issue 27): each thread with its title (its first message), working directory
 * and time; a search by title or folder; archive and unarchive, archived threads hidden until
 * asked for. In Chromium against the real server in demo mode with the real Codex app-server
 * (its model scripted on loopback); the threads are started by another client, as the CLI or a
 * script would.
 */
let rig: WebRig
let other: TestClient

beforeAll(async () => {
  rig = await startWebRig()
  other = await connect({ url: rig.server.url, token: rig.server.token })
}, 120_000)
afterAll(async () => {
  await other?.close()
  await rig?.close()
})

const ok = async (frame: Promise<ServerFrame>) => {
  const answer = await frame
  if (answer.type !== "result") throw new Error(JSON.stringify(answer))
  return answer.result
}

/** A Codex thread in `folder` (under the rig's scratch dir) whose first turn was `text`. */
const threadWith = async (folder: string, text: string): Promise<ThreadId> => {
  const cwd = join(rig.cwd, folder)
  mkdirSync(cwd, { recursive: true })
  rig.demo.models.codex.script({ output: [{ type: "text" as const, text: "Noted." }] })
  const { threadId } = (await ok(
    other.command({ type: "session.start", provider: "codex", cwd, mode: "default" })
  )) as {
    threadId: ThreadId
  }
  await ok(other.command({ type: "thread.subscribe", threadId }))
  await ok(other.command({ type: "turn.start", threadId, text }))
  await other.waitFor(isEvent("turn.completed", threadId), 90_000)
  return threadId
}

const BILLING = "Plan the migration of the billing service to PostgreSQL"
const SITE = "Add a dark mode to the settings page"

describe("web client: the thread list", { timeout: 240_000 }, () => {
  it("shows title, folder and time; searches by title and folder; archives and unarchives", async () => {
    const billing = await threadWith("billing", BILLING)
    const site = await threadWith("website", SITE)
    const tab = await rig.open()
    const { page } = tab
    const list = page.getByRole("region", { name: "Threads" })
    const row = (threadId: string) => list.locator(`[data-thread="${threadId}"]`)
    const item = (threadId: string) => list.locator("li", { has: page.locator(`[data-thread="${threadId}"]`) })
    await row(billing).waitFor({ timeout: 60_000 })
    await row(site).waitFor()
    expect(await row(billing).locator(".thread-row-title").textContent()).toBe(BILLING)
    expect(await row(site).locator(".thread-row-title").textContent()).toBe(SITE)
    expect(await row(billing).locator(".thread-cwd").textContent()).toBe("billing")
    expect(await row(billing).locator(".thread-cwd").getAttribute("title")).toBe(join(rig.cwd, "billing"))
    const time = await row(billing).locator("time").getAttribute("datetime")
    expect(Date.parse(time ?? "")).toBeGreaterThan(Date.now() - 10 * 60_000)
    await screenshot(tab, "30-thread-list")

    const search = list.getByRole("searchbox", { name: "Search threads" })
    const shown = async () =>
      (await list.locator("[data-thread]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-thread")))).sort()
    // By title, any case; by folder; every word must match.
    await search.fill("DARK mode")
    await expect.poll(shown).toEqual([site])
    await search.fill("billing")
    await expect.poll(shown).toEqual([billing])
    await search.fill("website")
    await expect.poll(shown).toEqual([site])
    await search.fill("dark billing")
    await expect.poll(shown).toEqual([])
    await list.getByText("No thread matches.").waitFor()
    await search.fill("")
    await expect.poll(shown).toEqual([billing, site].sort())

    // Another client following the list hears of the archive too.
    await ok(other.command({ type: "threads.subscribe" }))
    const archived = other.waitFor(
      (f): f is ServerFrame & { type: "threadEntry" } =>
        f.type === "threadEntry" && f.entry.thread.threadId === billing && f.entry.thread.archivedAt !== undefined,
      30_000
    )
    await item(billing).getByRole("button", { name: "Archive thread" }).click()
    await expect.poll(shown).toEqual([site])
    await archived
    const toggle = list.getByLabel("Show archived (1)")
    await toggle.check()
    await expect.poll(shown).toEqual([billing, site].sort())
    expect(await row(billing).locator(".badge", { hasText: "archived" }).count()).toBe(1)
    await screenshot(tab, "31-thread-list-archived")
    // Still archived after a reload: the server keeps it.
    await page.reload()
    await row(site).waitFor({ timeout: 60_000 })
    await expect.poll(shown).toEqual([site])
    await list.getByLabel("Show archived (1)").check()
    await item(billing).getByRole("button", { name: "Unarchive thread" }).click()
    await expect.poll(() => row(billing).locator(".badge", { hasText: "archived" }).count()).toBe(0)
    // Nothing archived: no toggle.
    await expect.poll(() => list.getByText(/Show archived/).count()).toBe(0)
    expect(tab.errors).toEqual([])
  })
})
