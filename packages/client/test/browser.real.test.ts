import { readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { join } from "node:path"
import { chromium, type Browser, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { PlanbridgeClient } from "../src/index.ts"
import { buildClient, clientRoot, startDemoServer, type DemoServer } from "./support/demoServer.ts"
import { serverSnapshot } from "./support/realServer.ts"

/**
 * The built browser bundle (dist/browser.js, `@planbridge/client/browser`) loaded by a page in
 * Debian's Chromium with no bundler, used against the real server in demo mode (the real Codex
 * app-server against the scripted model): connect, start a session, follow it, answer the
 * agent's question from the inbox.
 */

const CHROMIUM = "/usr/bin/chromium"
const STEP_MS = 120_000

/** What the page's module puts on `window`: the bundle's export, as a page script would use it. */
interface PageGlobals {
  PlanbridgeClient: typeof PlanbridgeClient
}

let rig: DemoServer
let browser: Browser
let page: Page
const errors: Array<string> = []

/** The page's own web server on loopback: the page and the bundle beside it, as a site would serve them. */
const servePage = async (bundle: string): Promise<Server> => {
  const page = `<!doctype html><script type="module">
    import { PlanbridgeClient } from "./planbridge-client.js"
    window.PlanbridgeClient = PlanbridgeClient
    document.title = "loaded"
  </script>`
  const server = createServer((req, res) => {
    const js = req.url === "/planbridge-client.js"
    res.writeHead(200, { "content-type": js ? "text/javascript" : "text/html" })
    res.end(js ? bundle : page)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return server
}

let site: Server
beforeAll(async () => {
  await buildClient()
  site = await servePage(readFileSync(join(clientRoot, "dist", "browser.js"), "utf8"))
  const address = site.address()
  if (address === null || typeof address === "string") throw new Error("the page's server has no port")
  const origin = `http://127.0.0.1:${address.port}`
  // Another origin than the server's: allowed as `serve --allow-origin` allows a site.
  rig = await startDemoServer({ allowedOrigins: [origin] })
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] })
  page = await browser.newPage()
  page.on("pageerror", (e) => errors.push(String(e)))
  await page.goto(`${origin}/index.html`)
  // A string, evaluated in the page: this file is compiled without the DOM's types.
  await page.waitForFunction('document.title === "loaded"')
}, STEP_MS)
afterAll(async () => {
  await browser?.close()
  await rig?.close()
  site?.close()
})

describe("the built client bundle in Chromium", () => {
  it(
    "connects with the browser's WebSocket, starts a session and answers its question",
    async () => {
      const outcome = await page.evaluate(
        async ({ url, token, cwd }) => {
          const { PlanbridgeClient } = globalThis as unknown as PageGlobals
          const client = await PlanbridgeClient.connect({ url, token })
          const providers = client.providers.map((p) => p.provider)
          const { threadId } = await client.startSession("codex", cwd, "plan")
          const store = await client.follow(threadId)
          await client.startTurn(threadId, "Ask me questions, then plan.")
          const entry = await new Promise<ReturnType<typeof client.inbox.getSnapshot>[number]>((resolve) => {
            const check = () => {
              const first = client.inbox.getSnapshot()[0]
              if (first === undefined) return
              stop()
              resolve(first)
            }
            const stop = client.inbox.subscribe(check)
            check()
          })
          if (entry.kind !== "prompt") throw new Error(`expected a prompt, got a ${entry.kind}`)
          const answers = entry.prompt.prompt.questions.map((q) => ({ questionId: q.id, text: "from the browser" }))
          await client.respond(entry.prompt.promptId, answers)
          await new Promise<void>((resolve) => {
            const check = () => {
              if (!store.getSnapshot()?.prompts.every((p) => p.status === "resolved")) return
              stop()
              resolve()
            }
            const stop = store.subscribe(check)
            check()
          })
          client.close()
          return { providers, threadId, questions: answers.length }
        },
        { url: rig.server.url, token: rig.server.token, cwd: rig.cwd }
      )
      expect(outcome.providers).toContain("codex")
      expect(outcome.questions).toBe(2)
      const snapshot = await serverSnapshot(rig.server, outcome.threadId)
      expect(snapshot.prompts.map((p) => p.resolution)).toEqual(["answered"])
      expect(snapshot.prompts[0]?.answers?.map((a) => a.text)).toEqual(["from the browser", "from the browser"])
      expect(errors).toEqual([])
    },
    STEP_MS
  )
})
