import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { chromium, type Browser, type BrowserContext, type Page, type WebSocketRoute } from "playwright-core"
import { build } from "vite"
import { startDemoProviders, type DemoProviders } from "../../../src/demo/DemoProviders.ts"
import { startServer, type RunningServer } from "../../../src/http/HttpServer.ts"
import type { RegisteredProvider } from "../../../src/orchestration/ProviderRegistry.ts"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"

/**
 * What the browser tests run against: the web client built from the current source, served by
 * the real server in demo mode (the real provider programs, each against the demo's scripted
 * model on loopback), driven by Debian's Chromium.
 */
export interface WebRig {
  readonly server: RunningServer
  readonly demo: DemoProviders
  readonly browser: Browser
  /** The server's data dir (its recorded provider process groups, the threads' homes). */
  readonly dataDir: string
  /** A scratch working directory for sessions. */
  readonly cwd: string
  /** A fresh browser profile (its own storage) with the page opened from the `#token=` link. */
  readonly open: () => Promise<Tab>
  /** Stops the server and starts it again on the same data dir and port (`server` is then the new one). */
  readonly restart: () => Promise<void>
  readonly close: () => Promise<void>
}

export interface Tab {
  readonly context: BrowserContext
  readonly page: Page
  /** Every text frame the page received, per WebSocket connection, in order. */
  readonly received: Array<Array<string>>
  /** Every text frame the page sent, per connection. */
  readonly sent: Array<Array<string>>
  /** Uncaught page errors and console errors (a CSP violation is one). */
  readonly errors: Array<string>
  /** Ends the current WebSocket as a dropped network would; reconnects are refused until `allow()`. */
  readonly drop: () => Promise<void>
  readonly allow: () => void
}

const webRoot = fileURLToPath(new URL("../../../../web", import.meta.url))

/** Builds apps/web into a scratch directory: the tests always see the current source. */
export const buildWeb = async (outDir: string): Promise<void> => {
  await build({ root: webRoot, logLevel: "silent", build: { outDir, emptyOutDir: true } })
}

export const CHROMIUM = "/usr/bin/chromium"

/** `also`: providers offered besides the demo's (a scripted agent a test needs). */
export const startWebRig = async (also: ReadonlyArray<RegisteredProvider> = []): Promise<WebRig> => {
  assertLoopbackOnly()
  if (!existsSync(CHROMIUM)) {
    throw new Error(`the browser tests drive Debian's Chromium at ${CHROMIUM}: apt-get install -y chromium`)
  }
  const dist = mkdtempSync(join(tmpdir(), "planbridge-web-dist-"))
  const dataDir = mkdtempSync(join(tmpdir(), "planbridge-web-data-"))
  const cwd = mkdtempSync(join(tmpdir(), "planbridge-web-cwd-"))
  const [demo] = await Promise.all([startDemoProviders(), buildWeb(dist)])
  const serverOptions = {
    dataDir,
    host: "127.0.0.1",
    port: 0,
    logLevel: "silent" as const,
    providers: [...demo.providers, ...also],
    webRoot: dist
  }
  let server = await startServer(serverOptions)
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] })
  const contexts: Array<BrowserContext> = []

  const open = async (): Promise<Tab> => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } })
    contexts.push(context)
    return openTab(context, `${server.url}/#token=${server.token}`)
  }

  const close = async () => {
    for (const c of contexts) await c.close().catch(() => undefined)
    await browser.close().catch(() => undefined)
    await server.close()
    await demo.close()
    for (const dir of [dist, dataDir, cwd]) rmSync(dir, { recursive: true, force: true })
  }
  const restart = async () => {
    const { port } = server
    await server.close()
    // The same data dir (so the same token) and port: open pages reconnect by themselves.
    server = await startServer({ ...serverOptions, port })
  }
  return {
    get server() {
      return server
    },
    demo,
    browser,
    dataDir,
    cwd,
    open,
    restart,
    close
  }
}

/**
 * Opens `address` in a new page of `context`, every WebSocket to `/ws` routed through the test so
 * that it sees each frame and can cut the link as a dropped network would.
 */
export const openTab = async (context: BrowserContext, address: string): Promise<Tab> => {
  const page = await context.newPage()
  const received: Array<Array<string>> = []
  const sent: Array<Array<string>> = []
  const errors: Array<string> = []
  page.on("pageerror", (e) => errors.push(String(e)))
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text())
  })
  let current: { readonly page: WebSocketRoute; readonly server: WebSocketRoute; cut: boolean } | undefined
  let refusing = false
  await page.routeWebSocket(/\/ws$/, (ws) => {
    if (refusing) return void ws.close({ code: 1001, reason: "test: network down" })
    const inbound: Array<string> = []
    const outbound: Array<string> = []
    received.push(inbound)
    sent.push(outbound)
    const upstream = ws.connectToServer()
    const link = { page: ws, server: upstream, cut: false }
    current = link
    // Only what crosses the link counts: after a cut nothing more reaches either side.
    ws.onMessage((m) => {
      if (link.cut) return
      outbound.push(String(m))
      upstream.send(m)
    })
    upstream.onMessage((m) => {
      if (link.cut) return
      inbound.push(String(m))
      ws.send(m)
    })
  })
  await page.goto(address)
  return {
    context,
    page,
    received,
    sent,
    errors,
    drop: async () => {
      refusing = true
      if (current === undefined) return
      current.cut = true
      await current.server.close({ code: 1001, reason: "test: network down" })
      await current.page.close({ code: 1001, reason: "test: network down" })
    },
    allow: () => {
      refusing = false
    }
  }
}

/** Every `event` frame of a thread a tab received, as `[connection, seq]`. */
export const eventSeqs = (tab: Tab, threadId: string): Array<{ readonly connection: number; readonly seq: number }> =>
  tab.received.flatMap((frames, connection) =>
    frames.flatMap((text) => {
      const frame = JSON.parse(text) as { type: string; threadId?: string; seq?: number }
      return frame.type === "event" && frame.threadId === threadId ? [{ connection, seq: frame.seq ?? -1 }] : []
    })
  )

/** Starts a session from the provider picker; resolves with the new thread's id. */
export const startSession = async (tab: Tab, label: string, cwd: string): Promise<string> => {
  const { page } = tab
  await page.getByLabel("Working directory").fill(cwd)
  const provider = page.locator(".provider", { hasText: label })
  await provider.getByRole("button").click()
  const view = page.locator(".thread-view")
  await view.waitFor()
  const threadId = await view.getAttribute("data-thread")
  if (threadId === null) throw new Error("the thread view has no thread id")
  return threadId
}

/** Sends a message from the composer. */
export const send = async (tab: Tab, text: string): Promise<void> => {
  await tab.page.getByLabel("Message").fill(text)
  await tab.page.getByRole("button", { name: "Send" }).click()
}

/** With PLANBRIDGE_WEB_SCREENSHOTS set to a directory, the tests leave PNGs of the main screens there. */
export const screenshot = async (tab: Tab, name: string): Promise<void> => {
  const dir = process.env.PLANBRIDGE_WEB_SCREENSHOTS
  if (dir !== undefined && dir !== "") await tab.page.screenshot({ path: join(dir, `${name}.png`), fullPage: true })
}
