import { MAX_ID_CHARS, PROTOCOL_VERSION, type ServerFrame } from "@planbridge/contracts"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import WebSocket from "ws"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, ServerStartError, type RunningServer } from "../../src/http/HttpServer.ts"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { EventStore } from "../../src/persistence/EventStore.ts"
import { generateEventMix, prng } from "../support/eventMix.ts"
import { BAD_FRAME_KINDS, badFrame } from "../support/badFrames.ts"
import { connect } from "../support/wsClient.ts"

let server: RunningServer
let dir: string
let pendingPromptId: string
let threadId: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "planbridge-bad-"))
  server = await startServer({ dataDir: dir, host: "127.0.0.1", port: 0, logLevel: "silent", providers: [] })
  const events = generateEventMix({ seed: 77, count: 600, threads: 2 })
  await server.runtime.runPromise(
    Effect.gen(function* () {
      yield* (yield* RuntimeIngestion).ingestAll(events)
    })
  )
  const resolved = new Set(
    events.flatMap((e) => (e.type === "user-input.resolved" ? [e.payload.promptId as string] : []))
  )
  const pending = events.find((e) => e.type === "user-input.requested" && !resolved.has(e.payload.prompt.promptId))!
  pendingPromptId = pending.type === "user-input.requested" ? pending.payload.prompt.promptId : ""
  threadId = pending.threadId
})
afterAll(async () => {
  await server.close()
  rmSync(dir, { recursive: true, force: true })
})

const countEvents = () =>
  server.runtime.runPromise(
    Effect.gen(function* () {
      return (yield* (yield* EventStore).readThread(threadId as never, 0, 1_000_000)).length
    })
  )

describe("bad input", () => {
  it("thousands of generated bad frames each get a typed error; the connection and the database are unharmed", async () => {
    const client = await connect({ url: server.url, token: server.token })
    const before = await countEvents()
    const r = prng(5)
    const n = 3000
    const errors: Array<ServerFrame & { type: "error" }> = []
    client.socket.on("message", (data) => {
      const frame = JSON.parse(String(data)) as ServerFrame
      if (frame.type === "error") errors.push(frame)
    })
    for (let i = 0; i < n; i++) client.sendRaw(badFrame(r.int(BAD_FRAME_KINDS), i, { threadId, pendingPromptId }))
    const deadline = Date.now() + 20_000
    while (errors.length < n && Date.now() < deadline) await new Promise((res) => setTimeout(res, 10))
    expect(errors).toHaveLength(n)
    const codes = new Set(errors.map((e) => e.error.code))
    expect([...codes].sort()).toEqual(
      [
        "bad_json",
        "invalid_frame",
        "unknown_thread",
        "unknown_prompt",
        "invalid_answer",
        "unknown_provider",
        "session_not_live",
        "protocol_version"
      ].sort()
    )
    // An invalid answer names the failing path; a schema error names the failing field.
    expect(errors.find((e) => e.error.code === "invalid_answer")?.error.path).toEqual([
      "answers",
      0,
      "selectedOptionIds",
      0
    ])
    expect(errors.find((e) => e.error.code === "invalid_frame" && e.error.message.includes("threadId"))).toBeDefined()
    // Still usable, the prompt still pending, nothing written.
    const ok = await client.command({ type: "threads.list" })
    expect(ok.type).toBe("result")
    const prompt = (await (
      await fetch(`${server.url}/api/prompts/${pendingPromptId}`, {
        headers: { authorization: `Bearer ${server.token}` }
      })
    ).json()) as { status: string }
    expect(prompt.status).toBe("pending")
    expect(await countEvents()).toBe(before)
    await client.close()
  })

  it("an oversized frame gets frame_too_large and the connection stays open; a huge one closes it", async () => {
    const client = await connect({ url: server.url, token: server.token })
    client.sendRaw(
      JSON.stringify({ type: "command", id: "big", command: { type: "threads.list", pad: "x".repeat(300 * 1024) } })
    )
    const error = await client.waitFor((f): f is ServerFrame & { type: "error" } => f.type === "error")
    expect(error.error.code).toBe("frame_too_large")
    // The refusal names the command it refuses, so that a client can settle that command.
    expect(error.id).toBe("big")
    // Not JSON (or no id): nothing to name.
    client.sendRaw("y".repeat(300 * 1024))
    const anonymous = await client.waitFor(
      (f): f is ServerFrame & { type: "error" } => f.type === "error" && f !== error
    )
    expect([anonymous.id, anonymous.error.code]).toEqual([null, "frame_too_large"])
    expect((await client.command({ type: "threads.list" })).type).toBe("result")
    const closed = new Promise<number>((resolve) => client.socket.once("close", (code) => resolve(code)))
    client.sendRaw("x".repeat(2 * 1024 * 1024))
    expect(await closed).toBe(1009)
  })

  it("refuses a missing or wrong token and a foreign Origin, on WebSocket and HTTP", async () => {
    // No token at all: the hello is refused and the socket closed.
    const anonymous = await connect({ url: server.url, hello: false })
    const closed = new Promise<number>((resolve) => anonymous.socket.once("close", (code) => resolve(code)))
    anonymous.sendRaw(JSON.stringify({ type: "hello", protocolVersion: PROTOCOL_VERSION }))
    expect(await closed).toBe(4401)
    // Commands before hello are refused.
    const early = await connect({ url: server.url, hello: false })
    const refused = await early.command({ type: "threads.list" })
    expect(refused.type === "error" && refused.error.code).toBe("unauthorized")
    await early.close()
    // Wrong token in the hello.
    await expect(connect({ url: server.url, token: "wrong", tokenInHello: true })).rejects.toThrow()
    // Foreign Origin: the upgrade itself is refused.
    await expect(connect({ url: server.url, token: server.token, origin: "https://evil.example" })).rejects.toThrow(
      /403/
    )
    // The allowed Origin (a page served from this server) passes.
    const browser = await connect({
      url: server.url,
      token: server.token,
      tokenInHello: true,
      origin: `http://127.0.0.1:${server.port}`
    })
    await browser.close()
    // HTTP: no token, wrong token, token in the URL, foreign Origin.
    const get = (path: string, headers: Record<string, string>) =>
      fetch(`${server.url}${path}`, { headers }).then((r) => r.status)
    expect(await get("/api/prompts", {})).toBe(401)
    expect(await get("/api/prompts", { authorization: "Bearer wrong" })).toBe(401)
    expect(await get(`/api/prompts?token=${server.token}`, {})).toBe(401)
    expect(await get("/api/prompts", { authorization: `Bearer ${server.token}`, origin: "https://evil.example" })).toBe(
      403
    )
    expect(await get("/api/prompts", { authorization: `Bearer ${server.token}` })).toBe(200)
    expect(await get("/api/prompts/nope", { authorization: `Bearer ${server.token}` })).toBe(404)
    // An id as long as the contracts allow, percent-encoded at its widest, reaches the route and
    // is answered as an unknown prompt (the router's own limit once refused real Codex ids).
    const longest = encodeURIComponent("é".repeat(MAX_ID_CHARS - 1) + "€")
    const unknown = await fetch(`${server.url}/api/prompts/${longest}`, {
      headers: { authorization: `Bearer ${server.token}` }
    })
    expect(unknown.status).toBe(404)
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe("unknown_prompt")
    const badAnswer = await fetch(`${server.url}/api/prompts/${pendingPromptId}/answer`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      body: JSON.stringify({ answers: "nope" })
    })
    expect(badAnswer.status).toBe(400)
    expect(((await badAnswer.json()) as { error: { code: string } }).error.code).toBe("invalid_frame")
  })

  it("refuses to bind to a non-loopback address without an explicit token", async () => {
    await expect(
      startServer({ dataDir: dir, host: "0.0.0.0", port: 0, logLevel: "silent", providers: [] })
    ).rejects.toBeInstanceOf(ServerStartError)
  })
})

void WebSocket
