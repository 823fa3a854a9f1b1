import { rmSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { crashProviders } from "../support/resumeRig.ts"
import { eventSeqs, screenshot, send, startSession, startWebRig, type WebRig } from "./support/webRig.ts"

/**
 * Resume in the web client, in Chromium against the real server in demo mode with the real
 * `codex app-server` (its model scripted on loopback): the provider process is SIGKILLed under a
 * live thread; the thread says why it is not live and offers Resume (Codex's capabilities say
 * `supportsResume`); the resumed session's second turn streams into the same timeline, with the
 * agent's context kept; a resume the server refuses is a toast. And a server stopped and started
 * again under an open page: the page reconnects and the thread resumes the same way.
 */
let rig: WebRig
const started = Date.now()
const CODEX = "Codex (demo)"
const FIRST = "Remember the word tangerine."
/**
 * The in-process server stops cleanly (its sessions exit `server_stopped`, on record, with a
 * message saying so); a crashed server's sessions are closed `server_restarted` by the next
 * start's recovery instead, which the page words "The server restarted…" (sessionEnd.test.ts).
 */
const REASON_AFTER_CLEAN_STOP = /^The server was stopped, and the session with it\. Planbridge was stopped/

beforeAll(async () => {
  rig = await startWebRig()
}, 120_000)

afterAll(async () => {
  await rig?.close()
  console.info(`webClient.resume.test.ts wall time: ${Date.now() - started} ms`)
})

const text = (t: string) => ({ output: [{ type: "text" as const, text: t }] })

describe("web client: resuming a thread whose provider died", { timeout: 240_000 }, () => {
  it("a killed provider: the reason and Resume; a second turn streams into the same thread; a refused resume is a toast", async () => {
    const tab = await rig.open()
    const { page } = tab
    const models = rig.demo.models.codex
    models.script(text("Noted: tangerine."), text("The word was tangerine."))
    const threadId = await startSession(tab, CODEX, rig.cwd)
    const view = page.locator(`.thread-view[data-thread="${threadId}"]`)
    const ended = page.getByTestId("session-ended")
    // Live: no Resume anywhere.
    expect(await ended.count()).toBe(0)
    await send(tab, FIRST)
    await view.locator(".item-assistant_message", { hasText: "Noted: tangerine." }).waitFor({ timeout: 90_000 })

    // The provider dies under the live thread (the server stays up).
    expect(await crashProviders(rig.dataDir)).toBeGreaterThan(0)
    await ended.waitFor({ timeout: 60_000 })
    expect(await ended.locator(".resume-reason").textContent()).toMatch(/^The provider process (crashed|was killed)\./)
    await expect(page.locator(".composer-reason").textContent()).resolves.toBe(
      "The session has ended: resume it to continue."
    )
    expect(await page.getByRole("button", { name: "Send" }).isDisabled()).toBe(true)
    await screenshot(tab, "10-session-ended")

    await ended.getByRole("button", { name: "Resume" }).click()
    // The resumed session's session.started makes the thread live again: the bar goes away.
    await ended.waitFor({ state: "detached", timeout: 90_000 })
    await page.getByRole("button", { name: "Send" }).waitFor()
    const resume = tab.sent
      .flat()
      .map((t) => JSON.parse(t) as { type: string; command?: { type: string; threadId?: string } })
      .filter((f) => f.type === "command" && f.command?.type === "thread.resume")
    expect(resume.map((f) => f.command?.threadId)).toEqual([threadId])

    const before = models.responseRequests().length
    await send(tab, "Which word did I ask you to remember?")
    await view.locator(".item-assistant_message", { hasText: "The word was tangerine." }).waitFor({ timeout: 90_000 })
    // Same thread, same timeline: the first turn's message is still there above the second.
    const messages = await view.locator(".item-assistant_message").allTextContents()
    expect(messages.findIndex((m) => m.includes("Noted: tangerine."))).toBeLessThan(
      messages.findIndex((m) => m.includes("The word was tangerine."))
    )
    // The resumed agent was given its conversation: the first turn's message is in the new request.
    expect(JSON.stringify(models.responseRequests()[before]!.body)).toContain(FIRST)
    // One gap-free sequence across the crash and the resume, on the one connection.
    const seqs = eventSeqs(tab, threadId).map((s) => s.seq)
    expect(seqs).toEqual(seqs.map((_, i) => i + 1))
    await screenshot(tab, "11-resumed-second-turn")

    // Killed again, and its state deleted by hand: the server refuses the resume, the page says why.
    await page.locator(".composer-reason").waitFor({ state: "detached", timeout: 60_000 })
    expect(await crashProviders(rig.dataDir)).toBeGreaterThan(0)
    await ended.waitFor({ timeout: 60_000 })
    rmSync(join(rig.dataDir, "homes", threadId), { recursive: true, force: true })
    await ended.getByRole("button", { name: "Resume" }).click()
    const toast = page.locator(".toast-error", { hasText: "thread.resume: resume_failed" })
    await toast.waitFor({ timeout: 60_000 })
    // Still readable, still offering a resume (nothing changed on the thread).
    await ended.getByRole("button", { name: "Resume" }).waitFor()
    expect(await view.locator(".item-assistant_message").count()).toBe(messages.length)
    await screenshot(tab, "12-resume-refused")
    expect(tab.errors).toEqual([])
  })

  it("a server stopped and started on its data dir and port: the open page reconnects, says the session ended, and resumes the thread", async () => {
    const tab = await rig.open()
    const { page } = tab
    const models = rig.demo.models.codex
    models.script(text("Noted: kiwi."), text("The fruit was kiwi."))
    const threadId = await startSession(tab, CODEX, rig.cwd)
    const view = page.locator(`.thread-view[data-thread="${threadId}"]`)
    await send(tab, "Remember the fruit kiwi.")
    await view.locator(".item-assistant_message", { hasText: "Noted: kiwi." }).waitFor({ timeout: 90_000 })

    await rig.restart()
    const ended = page.getByTestId("session-ended")
    await ended.waitFor({ timeout: 60_000 })
    expect(await ended.locator(".resume-reason").textContent()).toMatch(REASON_AFTER_CLEAN_STOP)
    await ended.getByRole("button", { name: "Resume" }).click()
    await ended.waitFor({ state: "detached", timeout: 90_000 })

    const before = models.responseRequests().length
    await send(tab, "Which fruit was it?")
    await view.locator(".item-assistant_message", { hasText: "The fruit was kiwi." }).waitFor({ timeout: 90_000 })
    expect(JSON.stringify(models.responseRequests()[before]!.body)).toContain("Remember the fruit kiwi.")
    // Gap-free across the restart: the page's second connection resumed where the first stopped.
    const seqs = eventSeqs(tab, threadId).map((s) => s.seq)
    expect(seqs).toEqual(seqs.map((_, i) => i + 1))
    // Chromium itself logs each reconnect attempt that the stopped server refused; only those
    // (on the WebSocket's own URL) are expected, nothing from the page.
    const refused = /^WebSocket connection to 'ws:\/\/127\.0\.0\.1:\d+\/ws' failed: .*ERR_CONNECTION_REFUSED$/
    expect(tab.errors.filter((e) => !refused.test(e))).toEqual([])
  })
})
