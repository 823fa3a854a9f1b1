import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startSession, startWebRig, type WebRig } from "./support/webRig.ts"

/**
 * The web client's composer, thread list and "Needs input" (issue 27), in Chromium against the
 * real server in demo mode with the real Codex app-server (its model scripted on loopback).
 */
let rig: WebRig
const CODEX = "Codex (demo)"

beforeAll(async () => {
  rig = await startWebRig()
}, 120_000)
afterAll(async () => rig?.close())

describe("web client: what the composer and the lists show", { timeout: 180_000 }, () => {
  it("a message above the server's frame limit stays in the composer, which says the limit", async () => {
    const tab = await rig.open()
    const { page } = tab
    await startSession(tab, CODEX, rig.cwd)
    const big = "word ".repeat(60 * 1024) // 300 KiB, as a paste would bring it
    const box = page.getByLabel("Message")
    await box.fill(big)
    await page.getByRole("button", { name: "Send" }).click()
    const alert = page.locator(".composer-error")
    await alert.waitFor({ timeout: 30_000 })
    expect(await alert.textContent()).toBe(
      "Not sent: this message (300 KiB) is larger than the server takes: at most 256 KiB per message."
    )
    expect((await box.inputValue()).length).toBe(big.length)
    // Nothing went to the server: no turn started.
    const sentTurns = tab.sent.flat().filter((f) => f.includes('"turn.start"'))
    expect(sentTurns).toEqual([])
    // Editing the text clears the refusal.
    await box.fill("hello")
    expect(await alert.count()).toBe(0)
    expect(tab.errors).toEqual([])
  })
})
