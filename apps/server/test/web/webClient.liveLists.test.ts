import type { ServerFrame, ThreadId } from "@planbridge/contracts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { connect, isEvent } from "../support/wsClient.ts"
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

  it("a question opened from another client appears in Needs input, with its thread, without a refresh", async () => {
    const tab = await rig.open()
    const { page } = tab
    const inbox = page.getByRole("complementary", { name: "Needs input" })
    await inbox.getByText("Nothing waits on you.").waitFor()
    // Another client (as the CLI or a script would) starts a session that asks.
    const other = await connect({ url: rig.server.url, token: rig.server.token })
    const ok = async (frame: Promise<ServerFrame>) => {
      const answer = await frame
      if (answer.type !== "result") throw new Error(JSON.stringify(answer))
      return answer.result
    }
    const { threadId } = (await ok(
      other.command({ type: "session.start", provider: "codex", cwd: rig.cwd, mode: "plan" })
    )) as { threadId: ThreadId }
    await ok(other.command({ type: "thread.subscribe", threadId }))
    await page.locator(`.thread-list [data-thread="${threadId}"]`).waitFor({ timeout: 60_000 })
    await ok(other.command({ type: "turn.start", threadId, text: "Ask me questions, then plan." }))
    const asked = await other.waitFor(isEvent("user-input.requested", threadId), 90_000)
    if (asked.event.type !== "user-input.requested") throw new Error("unreachable")
    const { prompt } = asked.event.payload
    const entry = inbox.getByRole("button", { name: `Question: ${prompt.title ?? prompt.questions[0].label}` })
    await entry.waitFor({ timeout: 60_000 })
    expect(await inbox.locator(".badge").textContent()).toBe("1")

    // Answered elsewhere: it leaves.
    await ok(
      other.command({
        type: "userInput.respond",
        promptId: prompt.promptId,
        answers: prompt.questions.map((q) => ({ questionId: q.id, text: "fine" })),
        clientRequestId: "live-lists-answer"
      })
    )
    await inbox.getByText("Nothing waits on you.").waitFor({ timeout: 60_000 })
    await other.close()
    // No reload and no list request: the thread list and the inbox came from the subscription.
    expect(tab.sent.flat().filter((f) => f.includes('"threads.list"'))).toEqual([])
    expect(tab.errors).toEqual([])
  })
})
