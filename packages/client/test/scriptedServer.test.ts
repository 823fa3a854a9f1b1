import type { Command, PromptId, ServerFrame, ThreadId } from "@planbridge/contracts"
import { afterEach, describe, expect, it, vi } from "vitest"
import { PlanbridgeClient, PlanbridgeError } from "../src/index.ts"
import { Ws } from "./support/realServer.ts"
import { startScriptedServer, type ScriptedConnection, type ScriptedServer } from "./support/scriptedServer.ts"

/**
 * What the client does with frames and close codes a real `planbridge` does not produce on
 * demand, so a scripted server (loopback, `ws`, PROTOCOL.md's server side) plays them: frames
 * this client cannot decode (a newer or broken server), `protocol_version` in answer to `hello`
 * (a server that speaks another version), and close code 1013 (the server's 16 MiB of unread
 * replies, which a client that reads cannot reach). Everything else is tested against the real
 * server (`client.test.ts`, `connection.test.ts`).
 */
const TOKEN = "scripted-token"
let servers: Array<ScriptedServer> = []
afterEach(async () => {
  vi.restoreAllMocks()
  await Promise.all(servers.map((s) => s.close()))
  servers = []
})

const connected = async (options: { onBadFrame?: (text: string, error: string) => void; backoffMs?: number } = {}) => {
  const server = await startScriptedServer()
  servers.push(server)
  const backoff =
    options.backoffMs === undefined ? {} : { backoff: { initialMs: options.backoffMs, maxMs: options.backoffMs } }
  const connecting = PlanbridgeClient.connect({
    url: server.url,
    token: TOKEN,
    WebSocket: Ws,
    ...backoff,
    ...(options.onBadFrame === undefined ? {} : { onBadFrame: options.onBadFrame })
  })
  const connection = await server.nextConnection()
  await connection.welcome(TOKEN)
  return { server, connection, client: await connecting }
}

/** Sends `command`, has the scripted server answer it with `result`, and resolves with what the client got. */
const roundTrip = async (
  client: PlanbridgeClient,
  connection: ScriptedConnection,
  command: Command,
  result: Extract<ServerFrame, { type: "result" }>["result"]
) => {
  const answered = client.command(command)
  const received = await connection.nextCommand()
  expect(received.command).toEqual(command)
  connection.send({ type: "result", id: received.id, result })
  return answered
}

describe("frames the client cannot decode", () => {
  it("are handed to onBadFrame with why, and dropped; the connection and its commands go on", async () => {
    const bad: Array<{ readonly text: string; readonly error: string }> = []
    const { client, connection } = await connected({ onBadFrame: (text, error) => bad.push({ text, error }) })
    const texts = [
      "not json",
      JSON.stringify({ type: "telemetry", at: 1 }), // a frame type of a newer server
      JSON.stringify({ type: "result", result: {} }), // no id
      JSON.stringify({ type: "event", threadId: "T", seq: "1", event: {} }) // wrong types
    ]
    const pending = client.listThreads()
    const { id } = await connection.nextCommand()
    for (const text of texts) connection.sendText(text)
    // Frames are read in order: once this answer is in, every bad frame before it was handled.
    connection.send({ type: "result", id, result: { threads: [] } })
    expect(await pending).toEqual([])
    expect(bad.map((b) => b.text)).toEqual(texts)
    expect(bad[0]!.error).toContain("JSON")
    for (const b of bad.slice(1)) expect(b.error).toContain("SchemaError")
    expect(client.status).toBe("open")
    expect(await roundTrip(client, connection, { type: "threads.list" }, { threads: [] })).toEqual({ threads: [] })
    client.close()
  })

  it("without onBadFrame are dropped without a throw; answers to no pending command and id-less errors are ignored", async () => {
    const { client, connection } = await connected()
    const statuses: Array<string> = []
    client.onStatus((s) => statuses.push(s))
    connection.sendText("{")
    connection.sendText(JSON.stringify({ type: "nope" }))
    connection.send({ type: "result", id: "c999", result: {} })
    connection.send({ type: "error", id: "c998", error: { code: "internal", message: "for no one" } })
    // An id-less error other than protocol_version (e.g. a frame the server found too large) ends nothing.
    connection.send({ type: "error", id: null, error: { code: "frame_too_large", message: "too large" } })
    expect(await roundTrip(client, connection, { type: "threads.list" }, { threads: [] })).toEqual({ threads: [] })
    expect(client.status).toBe("open")
    expect(statuses).toEqual([])
    client.close()
  })
})

describe("results", () => {
  it("are decoded with the command's success Schema in the command table: one that is not fails its command bad_frame", async () => {
    const { client, connection } = await connected()
    const threadId = "thread-results" as ThreadId
    const turn = client.startTurn(threadId, "hello").catch((e: unknown) => e)
    const sent = await connection.nextCommand()
    // A number where the table says `turnId` is a string, and `interrupted: false` where it says true.
    connection.send({ type: "result", id: sent.id, result: { turnId: 7 } })
    const refused = await turn
    expect(refused).toBeInstanceOf(PlanbridgeError)
    expect(refused).toMatchObject({ code: "bad_frame", path: ["result"] })
    expect((refused as PlanbridgeError).message).toContain("turn.start")
    expect((refused as PlanbridgeError).message).toContain('["turnId"]')
    const interrupt = client.interrupt(threadId).catch((e: unknown) => e)
    connection.send({ type: "result", id: (await connection.nextCommand()).id, result: { interrupted: false } })
    expect(await interrupt).toMatchObject({ code: "bad_frame" })
    // The connection goes on; a result that is one resolves typed, fields the table does not know dropped.
    const started = client.startTurn(threadId, "again")
    connection.send({ type: "result", id: (await connection.nextCommand()).id, result: { turnId: "turn-2", extra: 1 } })
    const { turnId } = await started
    expect(turnId).toBe("turn-2")
    expect(await started).toEqual({ turnId: "turn-2" })
    expect(client.status).toBe("open")
    client.close()
  })
})

describe("protocol_version", () => {
  it("in answer to hello ends the client: connect rejects with the server's message, the socket is closed, no retry", async () => {
    const server = await startScriptedServer()
    servers.push(server)
    const connecting = PlanbridgeClient.connect({ url: server.url, token: TOKEN, WebSocket: Ws }).catch(
      (e: unknown) => e
    )
    const connection = await server.nextConnection()
    expect(await connection.nextFrame()).toMatchObject({ type: "hello", token: TOKEN })
    // PROTOCOL.md: the server answers and keeps the connection open; the client is the one to close it.
    const message = "this server speaks protocol version 2"
    connection.send({ type: "error", id: null, error: { code: "protocol_version", message } })
    const refused = await connecting
    expect(refused).toBeInstanceOf(PlanbridgeError)
    expect(refused).toMatchObject({ code: "protocol_version", message })
    expect(await connection.closed).toEqual({ code: 1000, reason: "client closed" })
    expect(server.connections()).toBe(1)
  })
})

describe("close code 1013", () => {
  it("reconnects at once, not after the backoff delay; what may go again is resent, the rest fails disconnected", async () => {
    // Any backoff delay is five minutes (jitter pinned at half of 10 min): only an immediate reconnect beats the test's timeout.
    vi.spyOn(Math, "random").mockReturnValue(0.5)
    const { server, client, connection } = await connected({ backoffMs: 600_000 })
    const statuses: Array<string> = []
    client.onStatus((s) => statuses.push(s))
    const threadId = "thread-1013" as ThreadId
    const respond = client.respond("prompt-1" as PromptId, [], "answer-1013")
    const list = client.listThreads()
    const turn = client.startTurn(threadId, "hello").catch((e: unknown) => e)
    const mode = client.setMode(threadId, "plan").catch((e: unknown) => e)
    const sent = await Promise.all([1, 2, 3, 4].map(() => connection.nextCommand()))
    expect(sent.map((s) => s.command.type)).toEqual(["userInput.respond", "threads.list", "turn.start", "mode.set"])
    connection.close(1013, "client too slow: reconnect and resume with afterSeq")

    for (const failed of [await turn, await mode]) {
      expect(failed).toBeInstanceOf(PlanbridgeError)
      expect((failed as PlanbridgeError).code).toBe("disconnected")
      expect((failed as PlanbridgeError).message).toContain("(1013)")
    }
    const again = await server.nextConnection()
    await again.welcome(TOKEN)
    const resent = [await again.nextCommand(), await again.nextCommand()]
    // The same ids, the same clientRequestId: the server applies an answer once whatever the attempts.
    expect(resent).toEqual(sent.slice(0, 2))
    again.send({ type: "result", id: resent[0]!.id, result: { promptId: "prompt-1", status: "resolved" } })
    again.send({ type: "result", id: resent[1]!.id, result: { threads: [] } })
    expect(await respond).toEqual({ promptId: "prompt-1", status: "resolved" })
    expect(await list).toEqual([])
    expect(statuses).toEqual(["reconnecting", "open"])
    // Nothing else was resent: the next command the server reads is the next one sent.
    expect(await roundTrip(client, again, { type: "threads.list" }, { threads: [] })).toEqual({ threads: [] })
    client.close()
  })
})
