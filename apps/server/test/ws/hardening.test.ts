import type { ServerFrame } from "@planbridge/contracts"
import { rmSync } from "node:fs"
import { request } from "node:http"
import { networkInterfaces } from "node:os"
import WebSocket from "ws"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { RunningServer, ServerOptions } from "../../src/http/HttpServer.ts"
import { hostAllowed, hostAllowlist, hostnameOf } from "../../src/http/Security.ts"
import { startLoggedServer } from "../support/logCapture.ts"
import { openRaw, statusOf, upgradeRequest } from "../support/rawHttp.ts"
import { connect } from "../support/wsClient.ts"

const dirs: Array<string> = []
const servers: Array<RunningServer> = []
const start = async (options: Partial<ServerOptions> = {}) => {
  // No logLevel: the server's default level, as `planbridge serve` runs it.
  const { server, log, dir } = await startLoggedServer("hard", options)
  dirs.push(dir)
  servers.push(server)
  return { server, log }
}
afterAll(async () => {
  for (const server of servers) await server.close()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** node:http, because fetch does not let a caller choose the Host header. */
const get = (port: number, path: string, headers: Record<string, string>) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers, agent: false }, (res) => {
      let body = ""
      res.on("data", (chunk: Buffer) => (body += chunk.toString()))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on("error", reject)
    req.end()
  })

const stillOpenAfter = (ms: number) => new Promise((_, reject) => setTimeout(() => reject(new Error("still open")), ms))

const closeCode = (socket: WebSocket) => new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)))

describe("hardening", () => {
  let main: Awaited<ReturnType<typeof start>>
  beforeAll(async () => {
    main = await start()
  })

  it("no log line carries the token, a query string or an Authorization header", async () => {
    const { server, log } = main
    const secret = server.token
    const other = "Other-Secret-0123456789abcdefghijklmnopqrstuvwxyz"
    const bearer = { authorization: `Bearer ${secret}` }
    expect((await fetch(`${server.url}/api/threads?token=${secret}`)).status).toBe(401)
    expect((await fetch(`${server.url}/api/threads?token=${secret}`, { headers: bearer })).status).toBe(200)
    expect((await fetch(`${server.url}/api/nope?token=${secret}`, { headers: bearer })).status).toBe(404)
    expect((await fetch(`${server.url}/api/%E0%A4%A?token=${secret}`, { headers: bearer })).status).toBe(400)
    const wrong = { authorization: `Bearer ${other}` }
    expect((await fetch(`${server.url}/api/threads`, { headers: wrong })).status).toBe(401)
    // Upgrades: to /ws with the token in the URL (it is not accepted there), and to another path.
    const ws = new WebSocket(`${server.url.replace(/^http/, "ws")}/ws?token=${secret}`, { headers: bearer })
    await new Promise((resolve) => ws.once("open", resolve))
    ws.close()
    await closeCode(ws)
    const elsewhere = await openRaw(server.port, upgradeRequest(server.port, `/api/threads?token=${secret}`))
    await elsewhere.head
    elsewhere.socket.destroy()
    // Six requests reach the router (the malformed URL is refused before it), five complete (the upgrade is hijacked).
    await log.until((lines) => lines.filter((l) => l.msg === "incoming request").length >= 6)
    await log.until((lines) => lines.filter((l) => l.msg === "request completed").length >= 5)
    const text = log.text()
    expect(text).toContain("/api/threads")
    expect(text).not.toContain(secret)
    expect(text).not.toContain(other)
    expect(text).not.toContain("token=")
    expect(text.toLowerCase()).not.toContain("bearer")
  })

  it("client protocol errors on a WebSocket are logged at info, without stacks, and rate-limited", async () => {
    const { server, log } = main
    const before = log.parsed().length
    const connectOne = () => connect({ url: server.url, token: server.token })
    const clients = await Promise.all(Array.from({ length: 30 }, connectOne))
    const codes = clients.map((c) => closeCode(c.socket))
    // A text frame that is not UTF-8: a protocol error the client alone causes.
    for (const c of clients) c.socket.send(Buffer.from([0xff, 0xfe, 0xfd]), { binary: false })
    expect(new Set(await Promise.all(codes))).toEqual(new Set([1007]))
    await log.until((lines) => lines.slice(before).some((l) => l.msg === "websocket protocol error from client"))
    const lines = log.parsed().slice(before)
    expect(lines.filter((l) => l.level >= 50)).toEqual([])
    expect(log.text()).not.toContain('"stack"')
    const reported = lines.filter((l) => l.msg === "websocket protocol error from client")
    expect(reported.length).toBeGreaterThan(0)
    expect(reported.length).toBeLessThanOrEqual(10)
    expect(reported.every((l) => l.level === 30)).toBe(true)
  })

  it("a 4 MiB frame is answered with a 1009 close frame and a clean close, not a reset (1006)", async () => {
    const { server } = main
    const bearer = { authorization: `Bearer ${server.token}` }
    const raw = await openRaw(server.port, upgradeRequest(server.port, "/ws", bearer))
    expect(statusOf(await raw.head)).toBe(101)
    const resets: Array<string> = []
    raw.socket.on("error", (e: NodeJS.ErrnoException) => resets.push(e.code ?? e.message))
    // A client that writes its whole frame before reading (as many do): one masked text frame of 4 MiB.
    const size = 4 * 1024 * 1024
    const header = Buffer.alloc(14)
    header.writeUInt8(0x81, 0)
    header.writeUInt8(0x80 | 127, 1)
    header.writeBigUInt64BE(BigInt(size), 2)
    header.writeUInt32BE(0x0badf00d, 10)
    const frame = Buffer.concat([header, Buffer.alloc(size, 0x41)])
    await new Promise<void>((resolve) => raw.socket.write(frame, () => resolve()))
    raw.socket.end()
    await raw.closed
    const afterHandshake = Buffer.from(raw.received().slice(raw.received().indexOf("\r\n\r\n") + 4), "latin1")
    expect(afterHandshake.toString("hex")).toBe("880203f1") // close frame, code 1009
    expect(resets).toEqual([])
  })

  it("never echoes a command id longer than 200 characters", async () => {
    const client = await connect({ url: main.server.url, token: main.server.token })
    const invalid = (id: string) => JSON.stringify({ type: "command", id, command: { type: "no.such.command" } })
    const longest = "i".repeat(200)
    client.sendRaw(invalid(longest))
    client.sendRaw(invalid("j".repeat(201)))
    client.sendRaw(invalid("k".repeat(255 * 1024)))
    // Frames are answered in order for frames that fail to decode: this result comes after the three errors.
    await client.command({ type: "threads.list" })
    const errors = client.frames.filter((f): f is ServerFrame & { type: "error" } => f.type === "error")
    expect(errors.map((e) => [e.id, e.error.code])).toEqual([
      [longest, "invalid_frame"],
      [null, "invalid_frame"],
      [null, "invalid_frame"]
    ])
    expect(Math.max(...errors.map((e) => JSON.stringify(e).length))).toBeLessThan(4096)
    await client.close()
  })

  it("never echoes a subprotocol offered at the upgrade (Planbridge defines none)", async () => {
    const { server } = main
    const offer = { "Sec-WebSocket-Protocol": server.token }
    const raw = await openRaw(server.port, upgradeRequest(server.port, "/ws", offer))
    const head = await raw.head
    expect(statusOf(head)).toBe(400)
    expect(head).not.toContain(server.token)
    expect(head.toLowerCase()).not.toContain("sec-websocket-protocol")
    await raw.closed
    // A WebSocket library sees the refusal as such.
    const ws = new WebSocket(`${server.url.replace(/^http/, "ws")}/ws`, [server.token])
    ws.on("error", () => undefined) // terminate() below reports the aborted handshake as an error
    const refused = await new Promise<number>((resolve) => {
      ws.once("unexpected-response", (_req, res) => (resolve(res.statusCode ?? 0), ws.terminate()))
      ws.once("open", () => resolve(101))
    })
    expect(refused).toBe(400)
  })

  it("checks the Host header (DNS rebinding): loopback names, the bound host and allowedHosts pass", async () => {
    const { server } = await start({ allowedHosts: ["planbridge.test"] })
    const bearer = { authorization: `Bearer ${server.token}` }
    const p = server.port
    const served = [`127.0.0.1:${p}`, `localhost:${p}`, `LOCALHOST:${p}`, `[::1]:${p}`]
    served.push("planbridge.test", `planbridge.test:${p}`)
    for (const host of served) {
      expect([host, (await get(p, "/api/threads", { ...bearer, host })).status]).toEqual([host, 200])
    }
    for (const host of [`evil.example:${p}`, "evil.example", `127.0.0.1.evil.example:${p}`, `localhost.evil.example`]) {
      const refused = await get(p, "/api/threads", { ...bearer, host })
      expect([host, refused.status]).toEqual([host, 403])
      expect(refused.body).toContain("not allowed")
    }
    // The upgrade is refused before any WebSocket exists, and its socket is freed.
    const rebound = upgradeRequest(p, "/ws", bearer).replace(`Host: 127.0.0.1:${p}`, `Host: evil.example:${p}`)
    const raw = await openRaw(p, rebound)
    expect(statusOf(await raw.head)).toBe(403)
    await raw.closed
    const ok = await connect({ url: `http://localhost:${p}`, token: server.token })
    await ok.close()
  })

  it("Host names are compared without port, brackets, case or trailing dot", () => {
    expect(["[::1]:4317", "LocalHost.:80", "127.0.0.1", "::1", "Planbridge.Test"].map(hostnameOf)).toEqual([
      "::1",
      "localhost",
      "127.0.0.1",
      "::1",
      "planbridge.test"
    ])
    expect(hostAllowed("[::1]:9", hostAllowlist("::1"))).toBe(true)
    expect(hostAllowed(undefined, hostAllowlist("127.0.0.1"))).toBe(false)
    // A wildcard bind serves this machine's own addresses (IP literals cannot be rebound).
    const own = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address))
    expect(own.every((address) => hostAllowlist("0.0.0.0").has(address))).toBe(true)
    expect(hostAllowlist("127.0.0.1").has("evil.example")).toBe(false)
  })

  it("drops a half-sent request after the header timeout, a stalled body after the request timeout", async () => {
    const { server } = await start({ headersTimeoutMs: 300, requestTimeoutMs: 600 })
    const started = Date.now()
    const half = await openRaw(server.port, upgradeRequest(server.port, "/ws").replace(/\r\n\r\n$/, "\r\n"))
    await Promise.race([half.closed, stillOpenAfter(3_000)])
    expect(Date.now() - started).toBeLessThan(3_000)
    expect(statusOf(half.received())).toBe(408)
    const body =
      `POST /api/prompts/x/cancel HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.token}\r\n` +
      "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
    const stalled = await openRaw(server.port, body)
    await Promise.race([stalled.closed, stillOpenAfter(3_000)])
    expect(statusOf(stalled.received())).toBe(408)
    // A WebSocket outlives both timeouts: they bound the HTTP request, not the connection.
    const client = await connect({ url: server.url, token: server.token })
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect((await client.command({ type: "threads.list" })).type).toBe("result")
    await client.close()
  })
})
