import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { browserUrl } from "../../src/http/BrowserUrl.ts"
import { startServer, type RunningServer } from "../../src/http/HttpServer.ts"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { connect } from "../support/wsClient.ts"

/**
 * `GET /` serves the built web UI without a token (strict headers), while `/api` and `/ws` keep
 * requiring it; a page loaded from the server passes the Origin and Host checks on its
 * same-origin WebSocket. Without a build, `/` explains how to make one instead of answering 401.
 */
const scratch = mkdtempSync(join(tmpdir(), "planbridge-webui-"))
const webRoot = join(scratch, "dist")
const INDEX = '<!doctype html><html><head><script type="module" src="./assets/index-abc123.js"></script></head></html>'
let built: RunningServer
let unbuilt: RunningServer

beforeAll(async () => {
  assertLoopbackOnly()
  mkdirSync(join(webRoot, "assets"), { recursive: true })
  writeFileSync(join(webRoot, "index.html"), INDEX)
  writeFileSync(join(webRoot, "assets", "index-abc123.js"), "console.log('ui')\n")
  writeFileSync(join(webRoot, ".secret"), "dotfile")
  writeFileSync(join(scratch, "outside.txt"), "outside the root")
  const common = { host: "127.0.0.1", port: 0, providers: [], logLevel: "silent" } as const
  built = await startServer({ ...common, dataDir: join(scratch, "data-built"), webRoot })
  unbuilt = await startServer({ ...common, dataDir: join(scratch, "data-unbuilt"), webRoot: join(scratch, "none") })
})

afterAll(async () => {
  await built?.close()
  await unbuilt?.close()
  rmSync(scratch, { recursive: true, force: true })
})

describe("the web UI at /", () => {
  it("GET / answers 200 HTML without a token, with CSP, nosniff and no-store", async () => {
    const res = await fetch(`${built.url}/`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/html/)
    expect(await res.text()).toBe(INDEX)
    expect(res.headers.get("cache-control")).toBe("no-store")
    expect(res.headers.get("x-content-type-options")).toBe("nosniff")
    expect(res.headers.get("referrer-policy")).toBe("no-referrer")
    const csp = res.headers.get("content-security-policy") ?? ""
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    // The page's WebSocket goes to the host it was served from, and only there.
    expect(csp).toContain(`connect-src 'self' ws://127.0.0.1:${built.port}`)
    expect((await fetch(`${built.url}/index.html`)).headers.get("cache-control")).toBe("no-store")
  })

  it("hashed assets are served with their type, cached for good, with the same strict headers", async () => {
    const res = await fetch(`${built.url}/assets/index-abc123.js`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/javascript/)
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect(res.headers.get("x-content-type-options")).toBe("nosniff")
    const head = await fetch(`${built.url}/`, { method: "HEAD" })
    expect(head.status).toBe(200)
  })

  it("nothing outside the build: a dotfile is refused, traversal finds nothing, a missing file is a 404", async () => {
    expect((await fetch(`${built.url}/.secret`)).status).toBe(403)
    expect((await fetch(`${built.url}/missing.js`)).status).toBe(404)
    for (const path of ["/..%2Foutside.txt", "/assets/..%2F..%2Foutside.txt", "/%2e%2e/outside.txt"]) {
      const res = await fetch(`${built.url}${path}`)
      expect([403, 404], path).toContain(res.status)
      expect(await res.text()).not.toContain("outside the root")
    }
  })

  it("every /api call still needs the token; a write outside /api without it is refused too", async () => {
    for (const path of ["/api/prompts", "/api/threads", "/api", "/api/"]) {
      const res = await fetch(`${built.url}${path}`)
      expect(res.status, path).toBe(401)
    }
    const authorized = await fetch(`${built.url}/api/threads`, { headers: { authorization: `Bearer ${built.token}` } })
    expect(authorized.status).toBe(200)
    expect((await fetch(`${built.url}/`, { method: "POST", body: "x" })).status).toBe(401)
  })

  it("a Host the server does not serve gets no page (DNS rebinding defence applies to / too)", async () => {
    const { request } = await import("node:http")
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        { host: "127.0.0.1", port: built.port, path: "/", headers: { host: "evil.example" } },
        (r) => {
          r.resume()
          resolve(r.statusCode ?? 0)
        }
      )
      req.on("error", reject)
      req.end()
    })
    expect(status).toBe(403)
  })

  it("the page's same-origin WebSocket passes the Origin and Host checks; it still needs the token", async () => {
    const client = await connect({ url: built.url, token: built.token, tokenInHello: true, origin: built.url })
    expect(client.frames.map((f) => f.type)).toEqual(["welcome"])
    await client.close()
    const noToken = await connect({ url: built.url, origin: built.url, hello: false })
    noToken.sendRaw(JSON.stringify({ type: "hello", protocolVersion: 1 }))
    const closed = await new Promise<number>((resolve) => noToken.socket.once("close", (code) => resolve(code)))
    expect(closed).toBe(4401)
    await expect(connect({ url: built.url, token: built.token, origin: "http://evil.example" })).rejects.toThrow(/403/)
  })

  it("without a build, GET / explains how to build it (200 HTML, not a 401)", async () => {
    const res = await fetch(`${unbuilt.url}/`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/html/)
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'")
    expect(await res.text()).toContain("<code>npm run build</code>")
    expect((await fetch(`${unbuilt.url}/api/prompts`)).status).toBe(401)
  })
})

describe("the token hand-over address", () => {
  it("carries the token in the fragment, never in the query or the path", () => {
    const url = new URL(browserUrl("http://127.0.0.1:4317", "tok/en+="))
    expect(url.search).toBe("")
    expect(url.pathname).toBe("/")
    expect(decodeURIComponent(url.hash)).toBe("#token=tok/en+=")
    expect(browserUrl("http://0.0.0.0:4317", "t")).toBe("http://127.0.0.1:4317/#token=t")
    expect(browserUrl("http://[::1]:4317", "t")).toBe("http://[::1]:4317/#token=t")
  })
})
