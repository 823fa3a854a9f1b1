import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { crashProviders, providerProcesses } from "../support/resumeRig.ts"
import { send, startSession, startWebRig, type WebRig } from "./support/webRig.ts"

/**
 * Resume, then send at once, in Chromium (issue 27, item 5). The composer unlocks at the resumed
 * session's `session.started`, which the server records before the provider has finished starting
 * (Claude: before the Claude Code CLI answers `initialize`); a turn that reaches the server in
 * that window used to fail `session_not_live`. Here the window is held open: the new provider
 * processes are stopped (SIGSTOP) from the moment they appear until the page has had time to send,
 * so the send always lands while the resume is pending. The client library must hold the turn
 * until the resume is answered. Real server in demo mode, real Claude Agent SDK and CLI, the
 * model scripted on loopback.
 */
let rig: WebRig

beforeAll(async () => {
  rig = await startWebRig()
}, 120_000)
afterAll(async () => rig?.close())

const reply = (text: string) => ({ blocks: [{ type: "text" as const, text }] })

/** SIGSTOPs every process of the data dir's provider groups as soon as it appears, until `release`. */
const holdProviders = (dataDir: string) => {
  const stopped = new Set<number>()
  const timer = setInterval(() => {
    for (const pid of providerProcesses(dataDir)) {
      if (stopped.has(pid)) continue
      stopped.add(pid)
      try {
        process.kill(pid, "SIGSTOP")
      } catch {
        // Gone already.
      }
    }
  }, 5)
  return {
    stopped,
    release: () => {
      clearInterval(timer)
      for (const pid of stopped) {
        try {
          process.kill(pid, "SIGCONT")
        } catch {
          // Gone already.
        }
      }
    }
  }
}

describe("web client: a message sent while the thread is being resumed", { timeout: 240_000 }, () => {
  it("waits for the resume and runs, instead of failing session_not_live", async () => {
    const tab = await rig.open()
    const { page } = tab
    const models = rig.demo.models.claude
    models.script(reply("First answer."), reply("Second answer, after the resume."))
    const threadId = await startSession(tab, "Claude (demo)", rig.cwd)
    const view = page.locator(`.thread-view[data-thread="${threadId}"]`)
    await send(tab, "Hello.")
    await view.locator(".item-assistant_message", { hasText: "First answer." }).waitFor({ timeout: 90_000 })

    expect(await crashProviders(rig.dataDir)).toBeGreaterThan(0)
    const ended = page.getByTestId("session-ended")
    await ended.waitFor({ timeout: 60_000 })

    const held = holdProviders(rig.dataDir)
    try {
      await ended.getByRole("button", { name: "Resume" }).click()
      // session.started is in: the composer is open while the provider cannot answer yet.
      const sendButton = page.getByRole("button", { name: "Send" })
      await page.getByLabel("Message").fill("Hello again.")
      await expect.poll(() => sendButton.isEnabled(), { timeout: 60_000 }).toBe(true)
      await sendButton.click()
      // Long enough for a turn sent at once to reach the server and be refused.
      await page.waitForTimeout(3_000)
      expect(held.stopped.size).toBeGreaterThan(0)
      expect(tab.received.flat().filter((f) => f.includes("session_not_live"))).toEqual([])
    } finally {
      held.release()
    }

    await view
      .locator(".item-assistant_message", { hasText: "Second answer, after the resume." })
      .waitFor({ timeout: 90_000 })
    expect(tab.received.flat().filter((f) => f.includes("session_not_live"))).toEqual([])
    // Each message went once: the second was held, not refused and sent again.
    const sent = tab.sent.flat().map((t) => JSON.parse(t) as { command?: { type: string } })
    expect(sent.filter((f) => f.command?.type === "turn.start")).toHaveLength(2)
    expect(tab.errors).toEqual([])
  })
})
