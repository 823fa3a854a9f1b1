import type { Command, NotificationMessage } from "@planbridge/contracts"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { chromium, type Browser, type BrowserContext, type CDPSession, type Worker } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type RunningServer } from "../../src/http/HttpServer.ts"
import { makeCodexAdapter } from "../../src/provider/codex/CodexAdapter.ts"
import { codexCapabilities } from "../../src/provider/codex/CodexMappingState.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { functionCallOutputs, startMockResponsesModel, type MockResponsesModel } from "../support/mockResponsesModel.ts"
import { startPushService, type PushService } from "../support/pushService.ts"
import { connect, isEvent, type TestClient } from "../support/wsClient.ts"
import { buildWeb, CHROMIUM, openTab, type Tab } from "./support/webRig.ts"

/**
 * Issue 29 item 5 in Chromium: the web client as an installable PWA that answers from its
 * notifications, against the real server with the real `codex app-server` (its model scripted
 * on loopback). The page subscribes through the operator API; the server's Web Push message goes
 * to the push service the test runs on loopback (VAPID checked, aes128gcm decrypted), which
 * stands in for the browser's own push service (Chromium cannot reach one offline: the page's
 * `pushManager.subscribe` is the one thing stubbed, to hand out that service's subscription).
 * The decrypted message is delivered to the service worker through the DevTools protocol
 * (`ServiceWorker.deliverPushMessage`); a click on the notification is dispatched in the worker,
 * as headless Chromium has no system notification to click.
 */
let mock: MockResponsesModel
let server: RunningServer
let client: TestClient
let push: PushService
let browser: Browser
let dataDir: string
const dirs: Array<string> = []
const started = Date.now()

const tmp = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(dir)
  return dir
}

beforeAll(async () => {
  assertLoopbackOnly()
  const dist = tmp("planbridge-pwa-dist-")
  dataDir = tmp("planbridge-pwa-data-")
  ;[mock, push] = await Promise.all([startMockResponsesModel(), startPushService(), buildWeb(dist)]).then(
    ([m, p]) => [m, p] as const
  )
  server = await startServer({
    dataDir,
    host: "127.0.0.1",
    port: 0,
    logLevel: "silent",
    webRoot: dist,
    providers: [
      {
        adapter: makeCodexAdapter({
          model: "gpt-5.5",
          baseUrl: mock.baseUrl,
          envKey: "PLANBRIDGE_MOCK_KEY",
          apiKey: "k"
        }),
        capabilities: codexCapabilities
      }
    ]
  })
  client = await connect({ url: server.url, token: server.token, clientId: "pwa-test" })
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] })
}, 120_000)

afterAll(async () => {
  await browser?.close().catch(() => undefined)
  await client?.close()
  await server?.close()
  await push?.close()
  await mock?.close()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
  console.info(`webClient.push.test.ts wall time: ${Date.now() - started} ms`)
})

const ok = async (command: Command) => {
  const frame = await client.command(command)
  if (frame.type === "error") throw new Error(`${command.type} failed: ${frame.error.code}: ${frame.error.message}`)
  return frame.result as Record<string, unknown>
}

/** A session whose turn asks one single-choice question; resolves once it is asked. */
const asking = async () => {
  mock.script(
    {
      output: [
        {
          type: "function_call",
          name: "request_user_input",
          callId: "call-db",
          arguments: {
            questions: [
              {
                id: "db_choice",
                header: "Database",
                question: "Which database should the service use?",
                options: [
                  { label: "PostgreSQL (Recommended)", description: "Relational." },
                  { label: "SQLite", description: "Embedded." }
                ]
              }
            ]
          }
        }
      ]
    },
    { output: [{ type: "text", text: "Noted." }] }
  )
  const { threadId } = (await ok({ type: "session.start", provider: "codex", cwd: tmp("pwa-cwd-"), mode: "plan" })) as {
    threadId: string
  }
  await ok({ type: "thread.subscribe", threadId: threadId as never })
  await ok({ type: "turn.start", threadId: threadId as never, text: "Ask me first." })
  const asked = await client.waitFor(isEvent("user-input.requested", threadId), 90_000)
  if (asked.event.type !== "user-input.requested") throw new Error("unreachable")
  return { threadId, promptId: asked.event.payload.prompt.promptId as string }
}

/** Resolves once `find` finds something (checked every 50 ms, for at most `ms`). */
const eventually = async <A>(find: () => A | undefined | Promise<A | undefined>, ms = 30_000): Promise<A> => {
  const until = Date.now() + ms
  for (;;) {
    const found = await find()
    if (found !== undefined) return found
    if (Date.now() > until) throw new Error("not within the time")
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const pushed = (promptId: string, kind: "opened" | "resolved") =>
  eventually(
    () =>
      push.received
        .map((r) => r.message as NotificationMessage)
        .find((m) => m.promptId === promptId && m.kind === kind),
    60_000
  )

interface Browsed {
  readonly context: BrowserContext
  readonly tab: Tab
  /** The running service worker: Chromium stops an idle one and starts it again for the next push. */
  readonly worker: () => Worker
  readonly cdp: CDPSession
  readonly registrationId: string
}

/**
 * A fresh profile on a phone-sized screen (with notifications allowed, or not asked yet), the page opened from the
 * `#token=` link, its service worker running. The page's `pushManager` hands out the loopback
 * push service's subscription (the browser's own push service is out of reach offline).
 */
const openPhone = async (notifications: boolean): Promise<Browsed> => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true })
  if (notifications) await context.grantPermissions(["notifications"], { origin: server.url })
  await context.addInitScript(`(() => {
    const subscription = ${JSON.stringify(push.subscription)}
    PushManager.prototype.getSubscription = async () => null
    PushManager.prototype.subscribe = async (options) => ({ options, toJSON: () => subscription, unsubscribe: async () => true })
  })()`)
  const tab = await openTab(context, `${server.url}/#token=${server.token}`)
  const cdp = await context.newCDPSession(tab.page)
  const registrations: Array<{ registrationId: string; scopeURL: string; isDeleted: boolean }> = []
  cdp.on("ServiceWorker.workerRegistrationUpdated", (e) => registrations.push(...e.registrations))
  // Enabling reports the registrations there already.
  await cdp.send("ServiceWorker.enable")
  if (context.serviceWorkers().length === 0) await context.waitForEvent("serviceworker")
  const worker = () => context.serviceWorkers().at(-1)!
  await tab.page.evaluate("navigator.serviceWorker.ready.then(() => true)")
  const registration = await eventually(() => registrations.find((r) => !r.isDeleted))
  return { context, tab, worker, cdp, registrationId: registration.registrationId }
}

interface Shown {
  readonly title: string
  readonly body: string
  readonly actions: ReadonlyArray<{ readonly action: string; readonly title: string }>
}

/** The notifications the worker shows under `tag`, as the browser keeps them (run in the worker). */
const shown = (worker: Worker, tag: string) =>
  worker.evaluate<Array<Shown>>(`self.registration.getNotifications({ tag: ${JSON.stringify(tag)} }).then((all) =>
    all.map((n) => ({ title: n.title, body: n.body, actions: n.actions.map((a) => ({ action: a.action, title: a.title })) })))`)

/**
 * A click on the notification under `tag` (on `action`, or on its body when ""), `times` times
 * at once on the same notification (a double tap), dispatched in the worker.
 */
const click = (worker: Worker, tag: string, action: string, times = 1) =>
  worker.evaluate<boolean>(`self.registration.getNotifications({ tag: ${JSON.stringify(tag)} }).then(([notification]) => {
    if (notification === undefined) return false
    for (let i = 0; i < ${times}; i++)
      self.dispatchEvent(new NotificationEvent("notificationclick", { notification, action: ${JSON.stringify(action)} }))
    return true
  })`)

const deliver = (b: Browsed, message: NotificationMessage) =>
  b.cdp.send("ServiceWorker.deliverPushMessage", {
    origin: server.url,
    registrationId: b.registrationId,
    data: JSON.stringify(message)
  })

/**
 * Delivers `message` until the worker shows what `done` wants under `tag` (within 3 s a try, at
 * most 3 tries). Chromium's DevTools delivery now and then leaves no trace in the worker (about
 * one run in five, at any delivery, also the first one of a fresh profile); a push is shown under
 * its tag, so delivering it again is what a push service's retry would be.
 */
const deliverUntil = async (
  b: Browsed,
  message: NotificationMessage,
  done: (now: ReadonlyArray<Shown>) => boolean
): Promise<ReadonlyArray<Shown>> => {
  for (let attempt = 1; attempt <= 3; attempt++) {
    await deliver(b, message)
    const until = Date.now() + 3_000
    while (Date.now() < until) {
      const now = await shown(b.worker(), message.tag)
      if (done(now)) return now
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    console.info(`webClient.push: delivery ${attempt} of the ${message.kind} push showed nothing; again`)
  }
  throw new Error(`the ${message.kind} push was never shown`)
}

describe("web client as a PWA: answering from a notification", { timeout: 300_000 }, () => {
  it("is installable, and fits a phone's screen", async () => {
    const phone = await openPhone(false)
    const { page } = phone.tab
    // Chromium's own verdict on installability (a new context is incognito-like, which it notes and we ignore).
    const { installabilityErrors } = await phone.cdp.send("Page.getInstallabilityErrors")
    expect(installabilityErrors.filter((e) => e.errorId !== "in-incognito")).toEqual([])
    const manifest = await page.evaluate<{ type: string | null; body: { display: string; icons: Array<unknown> } }>(
      "fetch('./manifest.webmanifest').then(async (r) => ({ type: r.headers.get('content-type'), body: await r.json() }))"
    )
    expect(manifest.type).toContain("application/manifest+json")
    expect(manifest.body.display).toBe("standalone")
    // One column on a phone: what waits on the person comes first, nothing is wider than the screen.
    await page.locator(".inbox").waitFor()
    const layout = await page.evaluate<{ scroll: number; width: number; inboxTop: number; sidebarTop: number }>(
      `({ scroll: document.documentElement.scrollWidth, width: window.innerWidth,
          inboxTop: document.querySelector(".inbox").getBoundingClientRect().top,
          sidebarTop: document.querySelector(".sidebar").getBoundingClientRect().top })`
    )
    expect(layout.scroll).toBeLessThanOrEqual(layout.width)
    expect(layout.inboxTop).toBeLessThan(layout.sidebarTop)
    expect(phone.tab.errors).toEqual([])
    await phone.context.close()
  })

  it("a push shows the question with its options as actions; an action answers it once; the agent gets it", async () => {
    const phone = await openPhone(true)
    const { page } = phone.tab
    // Notifications were allowed: the page subscribed this browser through the operator API.
    await page.locator('[data-push="on"]').waitFor({ timeout: 30_000 })
    const browserClientId = await page.evaluate<string>("localStorage.getItem('planbridge.clientId')")
    const status = await fetch(`${server.url}/api/notifications/status`, {
      headers: { authorization: `Bearer ${server.token}` }
    }).then((r) => r.json() as Promise<{ sinks: Array<{ kind: string; endpoint: string; clientId: string }> }>)
    expect(status.sinks).toContainEqual(
      expect.objectContaining({ kind: "webpush", endpoint: push.subscription.endpoint, clientId: browserClientId })
    )

    const { threadId, promptId } = await asking()
    const opened = await pushed(promptId, "opened")
    const tag = `planbridge-prompt:${promptId}`
    // Each option came with its own capability; the capability is nowhere in the server's files.
    const answers = opened.actions.map((a) => a.answer)
    expect(answers.every((a) => typeof a === "string" && a.length > 40)).toBe(true)
    for (const entry of readdirSync(dataDir, { withFileTypes: true, recursive: true })) {
      if (!entry.isFile()) continue
      const text = readFileSync(join(entry.parentPath, entry.name)).toString("latin1")
      for (const answer of answers) expect(text.includes(answer!), entry.name).toBe(false)
    }

    const [first] = await deliverUntil(phone, opened, (now) => now.length === 1)
    expect(first).toEqual({
      title: "Database",
      body: "Which database should the service use?",
      // Chromium shows two actions (Notification.maxActions): both options fit.
      actions: [
        { action: "opt-0", title: "PostgreSQL (Recommended)" },
        { action: "opt-1", title: "SQLite" }
      ]
    })

    // Opening it opens the thread at the prompt, in the page already open.
    expect(await click(phone.worker(), tag, "")).toBe(true)
    await page.locator(`[data-prompt="${promptId}"][data-revealed]`).waitFor({ timeout: 30_000 })
    const address = new URL(page.url())
    expect([address.searchParams.get("thread"), address.searchParams.get("prompt")]).toEqual([threadId, promptId])
    expect(await shown(phone.worker(), tag)).toEqual([])

    // A capability answers only what it was made for, and is the route's only key.
    const forged = await fetch(`${server.url}/api/push/answer`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ promptId, questionId: "db_choice", optionId: "opt-1", answer: answers[0] })
    })
    expect(forged.status).toBe(401)

    // The push again (another device, or the same one): a double tap on SQLite answers once.
    await deliverUntil(phone, opened, (now) => now.length === 1)
    expect(await click(phone.worker(), tag, "opt-1", 2)).toBe(true)
    const resolved = await client.waitFor(isEvent("user-input.resolved", threadId), 30_000)
    if (resolved.event.type !== "user-input.resolved") throw new Error("unreachable")
    expect(resolved.event.payload.resolvedBy).toEqual({ actor: "user", via: "push", clientId: browserClientId })
    // Another device choosing the other option afterwards answers nothing.
    const second = await fetch(`${server.url}/api/push/answer`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ promptId, questionId: "db_choice", optionId: "opt-0", answer: answers[0] })
    })
    expect(second.status).toBe(409)
    expect(await second.json()).toMatchObject({ error: { code: "client_request_conflict" } })

    // The agent got the one answer: SQLite.
    await client.waitFor(isEvent("turn.completed", threadId), 90_000)
    const outputs = mock.responseRequests().flatMap((r) => functionCallOutputs(r).filter((o) => o.callId === "call-db"))
    expect(outputs.length).toBeGreaterThan(0)
    expect(new Set(outputs.map((o) => String(o.output))).size).toBe(1)
    expect(String(outputs[0]!.output)).toContain("SQLite")
    expect(
      client.frames.filter(
        (f) => f.type === "event" && f.event.type === "user-input.resolved" && f.event.threadId === threadId
      )
    ).toHaveLength(1)
    // The page says who answered.
    await page
      .locator(`[data-prompt="${promptId}"]`)
      .getByText("by you, from a notification on this device")
      .waitFor({ timeout: 30_000 })

    // The replacement closes the question: what remains under its tag has no options.
    await deliverUntil(
      phone,
      await pushed(promptId, "resolved"),
      (now) => now.length === 1 && now[0]!.title === "No longer waiting"
    )
    expect((await shown(phone.worker(), tag))[0]!.actions).toEqual([])
    // A late copy of the question (resent by a server that crashed before recording its send) does not reopen it.
    await deliver(phone, opened)
    for (let look = 0; look < 5; look++) {
      expect(await shown(phone.worker(), tag)).toEqual([
        { title: "No longer waiting", body: expect.any(String), actions: [] }
      ])
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(phone.tab.errors).toEqual([])
    await phone.context.close()
  })
})
