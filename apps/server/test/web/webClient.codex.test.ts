import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { eventSeqs, screenshot, send, startSession, startWebRig, type Tab, type WebRig } from "./support/webRig.ts"

/**
 * The web client in Chromium against the real server in demo mode, with the real
 * `codex app-server` (its model scripted on loopback): a plan session with a question card
 * answered by keyboard, free text and a secret; two browsers racing on it; the checklist; a
 * dropped WebSocket and the resume.
 */
let rig: WebRig
const started = Date.now()
const CODEX = "Codex (demo)"
const SECRETS = ["s3cr3t-demo-token-4242", "other-secret-7777"]

beforeAll(async () => {
  rig = await startWebRig()
}, 120_000)

afterAll(async () => {
  await rig?.close()
  console.info(`webClient.codex.test.ts wall time: ${Date.now() - started} ms`)
})

const call = (name: string, args: unknown) => ({ type: "function_call" as const, name, arguments: args })
const deployQuestions = call("request_user_input", {
  questions: [
    {
      id: "language",
      header: "Language",
      question: "Which language should the service be written in?",
      options: [
        { label: "TypeScript (Recommended)", description: "Node 20, typed." },
        { label: "Go", description: "One static binary." }
      ]
    },
    // Codex 0.171 refuses a question without options; free text is its "Other" (isOther).
    {
      id: "service_name",
      header: "Name",
      question: "What should the service be called?",
      isOther: true,
      options: [{ label: "greeter", description: "The default name." }]
    },
    {
      id: "deploy_token",
      header: "Token",
      question: "Paste the deploy token",
      isOther: true,
      isSecret: true,
      options: [{ label: "Use the staging token", description: "Already on the server." }]
    }
  ]
})
// Markup and a script link in a plan must reach the screen as text, never as elements.
const PLAN =
  "# Plan: deploy\n\n1. Build the image.\n2. Push it with the token.\n\n" +
  '<img src="x" onerror="window.pwned=1"> [run](javascript:window.pwned=1) [docs](https://example.com/docs)\n'

const planText = { type: "text" as const, text: `Here is my plan.\n\n<proposed_plan>\n${PLAN}</proposed_plan>\n` }

/** Everything a tab holds that a secret could leak into: the DOM, input values, both storages. */
const visibleState = (tab: Tab) =>
  // A string, evaluated in the page: this file is compiled without the DOM's types.
  tab.page.evaluate(`({
    html: document.documentElement.outerHTML,
    values: [...document.querySelectorAll("input, textarea")].map((e) => e.value),
    storage: JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage })
  })`) as Promise<{ html: string; values: Array<string>; storage: string }>

describe("web client with the real Codex app-server", () => {
  it("a plan session: one card answered with an option by keyboard, free text and a secret; two browsers race, one wins; the plan renders with Codex's controls", async () => {
    const a = await rig.open()
    // The token moved from the address bar into session storage.
    expect(a.page.url()).not.toContain("token")
    expect(await a.page.evaluate("Object.keys(sessionStorage)")).toEqual(["planbridge.token"])
    const picker = a.page.locator(".provider", { hasText: CODEX })
    await expect(picker.locator(".badge-demo").textContent()).resolves.toBe("demo")
    await expect(picker.getByRole("button").textContent()).resolves.toBe("Start a plan session")

    rig.demo.models.codex.script({ output: [deployQuestions] }, { output: [planText] })
    const threadId = await startSession(a, CODEX, rig.cwd)
    await send(a, "Plan the deployment; ask me what you need.")
    const cardA = a.page.locator(`.question-card[data-prompt]:not(.resolved)`)
    await cardA.waitFor({ timeout: 60_000 })
    // A blocking question stops the composer, as the server would.
    await expect(a.page.locator(".composer-reason").textContent()).resolves.toContain("Answer or dismiss")
    expect(await a.page.getByLabel("Paste the deploy token (secret)").getAttribute("type")).toBe("password")

    // A second browser opens the same thread from its list, where the badge counts the question.
    const b = await rig.open()
    const listed = b.page.locator(`button.thread[data-thread="${threadId}"]`)
    await expect(listed.locator(".badge-pending").textContent({ timeout: 30_000 })).resolves.toBe("1")
    await listed.click()
    const cardB = b.page.locator(`.question-card[data-prompt]:not(.resolved)`)
    await cardB.waitFor()

    const fill = async (tab: Tab, option: "1" | "2", name: string, secret: string) => {
      await tab.page.locator(`fieldset[data-question="language"]`).focus()
      await tab.page.keyboard.press(option)
      await tab.page.getByLabel("What should the service be called? (other)").fill(name)
      await tab.page.getByLabel("Paste the deploy token (secret)").fill(secret)
    }
    await fill(a, "2", "greeter", SECRETS[0]!)
    await fill(b, "1", "hello-svc", SECRETS[1]!)
    expect(await a.page.locator(`fieldset[data-question="language"] input`).nth(1).isChecked()).toBe(true)
    await screenshot(a, "05-secret-question")
    // Both submit at the same moment (a click waits for a stable card, which the first answer may
    // already have resolved): the server takes one answer, the other gets already_resolved.
    const submit = (tab: Tab) =>
      tab.page
        .locator("form.question-card")
        .evaluate((form) => (form as unknown as { requestSubmit: () => void }).requestSubmit())
    await Promise.all([submit(a), submit(b)])

    // Both show the card answered, the secret only as "answered (hidden)"; exactly one says elsewhere.
    for (const tab of [a, b]) {
      const resolved = tab.page.locator(".question-card.resolved")
      await resolved.waitFor({ timeout: 30_000 })
      await expect(resolved.locator("dd").nth(2).textContent()).resolves.toBe("answered (hidden)")
    }
    const elsewhereCounts = () => Promise.all([a, b].map((t) => t.page.locator(".question-card .elsewhere").count()))
    await expect.poll(async () => (await elsewhereCounts()).join(), { timeout: 15_000 }).toMatch(/^(0,1|1,0)$/)
    const elsewhere = await elsewhereCounts()
    await screenshot(elsewhere[0] === 1 ? a : b, "06-answered-elsewhere")
    const [winner, winnerSecret] = elsewhere[0] === 0 ? [a, SECRETS[0]!] : [b, SECRETS[1]!]
    // Issue 29: who answered, from the resolution's provenance and each browser's own client id.
    const resolvedBy = (tab: Tab) => tab.page.locator(".question-card.resolved .resolved-by").textContent()
    await expect.poll(() => resolvedBy(winner), { timeout: 15_000 }).toBe("by you on this browser")
    await expect.poll(() => resolvedBy(winner === a ? b : a), { timeout: 15_000 }).toBe("by a person on another client")
    await expect(winner.page.locator(".question-card.resolved dd").nth(0).textContent()).resolves.toBe(
      winner === a ? "Go" : "TypeScript (Recommended)"
    )

    // The plan arrives; Codex cannot exit plan mode, so the card offers the next turn instead.
    const plan = a.page.locator(".plan-card")
    await plan.locator("h1", { hasText: "Plan: deploy" }).waitFor({ timeout: 60_000 })
    // The plan streams in first; its controls come with plan.proposed.completed.
    await plan.getByRole("button", { name: "Implement this plan" }).waitFor({ timeout: 30_000 })
    expect(await plan.getByRole("button", { name: "Approve" }).count()).toBe(0)
    expect(await plan.locator("img").count()).toBe(0)
    await expect(plan.locator(".markdown").textContent()).resolves.toContain('<img src="x"')
    expect(await plan.locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href")))).toEqual([
      "https://example.com/docs"
    ])
    expect(await a.page.evaluate("window.pwned")).toBeUndefined()
    await expect(
      a.page.getByRole("radiogroup", { name: "Mode" }).getByRole("radio").allTextContents()
    ).resolves.toEqual(["default", "plan"])

    // The provider got the winner's secret in clear; no browser holds or received either secret.
    expect(JSON.stringify(rig.demo.models.codex.requests)).toContain(winnerSecret)
    for (const tab of [a, b]) {
      const state = await visibleState(tab)
      for (const secret of SECRETS) {
        expect(state.html).not.toContain(secret)
        expect(state.values.join()).not.toContain(secret)
        expect(state.storage).not.toContain(secret)
        expect(tab.received.flat().join()).not.toContain(secret)
      }
    }
    // After a reload the card is rebuilt from the thread's history: still hidden, and no claim of
    // who answered, since this page did not see it happen.
    await winner.page.reload()
    await winner.page.locator(`button.thread[data-thread="${threadId}"]`).click()
    const reloaded = winner.page.locator(".question-card.resolved")
    await reloaded.waitFor({ timeout: 30_000 })
    await expect(reloaded.locator("dd").nth(2).textContent()).resolves.toBe("answered (hidden)")
    expect(await reloaded.locator(".elsewhere").count()).toBe(0)
    // The provenance is the server's, so it survives the reload: this browser answered it.
    await expect(reloaded.locator(".resolved-by").textContent()).resolves.toBe("by you on this browser")
    expect((await visibleState(winner)).html).not.toContain(winnerSecret)
    // The other browser never sent the winner's secret: every frame it got was redacted by the server.
    const other = winner === a ? b : a
    expect(other.received.flat().join()).toContain('"redacted":true')
  })

  it("the checklist updates; a dropped WebSocket shows the banner, and the resume misses and repeats nothing", async () => {
    const tab = await rig.open()
    const threadId = await startSession(tab, CODEX, rig.cwd)
    // The checklist scenario runs in default mode: switched from the capability-driven toggle.
    await tab.page.getByRole("radio", { name: "default" }).click()
    await tab.page.locator(`.mode-toggle button[aria-checked="true"]`, { hasText: "default" }).waitFor()
    // The demo's checklist, with the second model turn held until this browser is offline.
    let release = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    const steps = ["Read the code", "Write the change", "Run the tests"]
    const update = (done: number) =>
      call("update_plan", {
        plan: steps.map((step, i) => ({
          step,
          status: i < done ? "completed" : i === done ? "in_progress" : "pending"
        }))
      })
    rig.demo.models.codex.script(
      { output: [update(0)] },
      { output: [update(1)], gate },
      { output: [update(3)] },
      { output: [{ type: "text", text: "All three steps are done." }] }
    )
    const before = rig.demo.models.codex.responseRequests().length
    await send(tab, "Walk me through the checklist")
    const checklist = tab.page.locator(".checklist")
    await checklist.locator("h2", { hasText: "revision 1" }).waitFor({ timeout: 60_000 })
    expect(await checklist.locator("ol > li.step").allTextContents()).toHaveLength(3)
    expect(await checklist.locator(".checklist-progress").textContent()).toBe("0 of 3")
    // Beside the composer, on its row.
    const [list, composer] = await Promise.all([checklist.boundingBox(), tab.page.locator(".composer").boundingBox()])
    expect(list!.x).toBeGreaterThanOrEqual(composer!.x + composer!.width)
    expect(list!.y).toBeLessThan(composer!.y + composer!.height)

    await tab.drop()
    await tab.page.getByRole("status").filter({ hasText: "Reconnecting" }).waitFor()
    await screenshot(tab, "07-reconnecting")
    // The agent goes on while this browser is away: the rest of the turn happens now.
    release()
    await rig.demo.models.codex.waitForResponseRequests(before + 4)
    tab.allow()

    await tab.page.getByRole("status").filter({ hasText: "Resumed" }).waitFor({ timeout: 30_000 })
    await tab.page.locator(".item-assistant_message", { hasText: "All three steps are done." }).waitFor()
    await checklist.locator("h2", { hasText: "revision 3" }).waitFor()
    expect(
      await checklist.locator("ol > li.step").evaluateAll((els) => els.map((e) => e.getAttribute("data-status")))
    ).toEqual(["completed", "completed", "completed"])
    expect(await checklist.locator(".checklist-progress").textContent()).toBe("3 of 3")
    await checklist.locator("summary").click()
    expect(await checklist.locator(".revision").count()).toBe(2)
    await screenshot(tab, "08-resumed-checklist")

    // Gap-free: every event once, in order, across both connections; the second resumed with afterSeq.
    const seqs = eventSeqs(tab, threadId)
    expect(seqs.map((s) => s.seq)).toEqual(seqs.map((_, i) => i + 1))
    const connections = [...new Set(seqs.map((s) => s.connection))]
    expect(connections.length).toBeGreaterThanOrEqual(2)
    const lastBeforeDrop = Math.max(...seqs.filter((s) => s.connection === connections[0]).map((s) => s.seq))
    const resubscribe = tab.sent[connections[1]!]!.map((t) => JSON.parse(t)).find(
      (f) => f.type === "command" && f.command.type === "thread.subscribe" && f.command.threadId === threadId
    )
    expect(resubscribe.command.afterSeq).toBe(lastBeforeDrop)
    expect(tab.received[connections[1]!]!.some((t) => t.includes('"type":"snapshot"'))).toBe(false)
  })

  it("a command approval shows Codex's own options; the chosen one runs the command", async () => {
    const tab = await rig.open()
    const threadId = await startSession(tab, CODEX, rig.cwd)
    await tab.page.getByRole("radio", { name: "default" }).click()
    await tab.page.locator(`.mode-toggle button[aria-checked="true"]`, { hasText: "default" }).waitFor()
    await send(tab, "Run the demo command")
    const card = tab.page.locator(".approval-card:not(.resolved)")
    await card.waitFor({ timeout: 60_000 })
    const options = await card.locator(".actions button").allTextContents()
    expect(options.length).toBeGreaterThanOrEqual(2)
    // What runs and where: Codex's command and working directory, structured on the request.
    // (Codex wraps it in its shell, `bash -c` or `bash -lc`.)
    expect(await card.locator("pre.approval-command").textContent()).toMatch(
      /^\/bin\/bash -l?c .*> planbridge-demo\.txt/u
    )
    expect(await card.locator(".approval-cwd").textContent()).toBe(`in ${rig.cwd}`)
    await screenshot(tab, "09-approval")
    // A page opened after the request shows the same options (they are part of the thread's
    // state, not only of the event a page happened to see) and can answer it.
    const later = await rig.open()
    await later.page.locator(`button.thread[data-thread="${threadId}"]`).click()
    const laterCard = later.page.locator(".approval-card:not(.resolved)")
    await laterCard.waitFor({ timeout: 60_000 })
    expect(await laterCard.locator(".actions button").allTextContents()).toEqual(options)
    // The first option the provider marked as allowing, by its kind (never by its label).
    await laterCard.locator(".actions button.primary").first().click()
    await later.page.locator(".approval-card.resolved").waitFor({ timeout: 30_000 })
    await tab.page.locator(".approval-card.resolved").waitFor({ timeout: 30_000 })
    await tab.page.locator(".item-assistant_message", { hasText: "The command ran" }).waitFor({ timeout: 60_000 })
    expect(existsSync(join(rig.cwd, "planbridge-demo.txt"))).toBe(true)
  })
})
