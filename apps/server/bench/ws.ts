import { PROTOCOL_VERSION, type RuntimeEvent, type ServerFrame } from "@planbridge/contracts"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import WebSocket, { WebSocketServer } from "ws"
import { startServer, type RunningServer } from "../src/http/HttpServer.ts"
import { RuntimeIngestion } from "../src/orchestration/RuntimeIngestion.ts"
import { generateEventMix } from "../test/support/eventMix.ts"

const percentile = (sorted: ReadonlyArray<number>, p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN
const summarize = (latencies: Array<number>) => {
  latencies.sort((a, b) => a - b)
  return { samples: latencies.length, p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
}

const openClient = (url: string, headers: Record<string, string>) =>
  new Promise<WebSocket>((resolve, reject) => {
    const socket = new WebSocket(url, { headers })
    socket.once("open", () => resolve(socket))
    socket.once("error", reject)
  })

const base = (threadId: string, n: number) => ({ eventId: `${threadId}-e${n}`, provider: "codex", threadId, createdAt: new Date().toISOString() })

export interface LatencyOptions {
  readonly sessions: number
  readonly clients: number
  /** Events per session. */
  readonly events: number
  /** Delay between a session's events. */
  readonly intervalMs: number
}

/**
 * Latency from a provider event (handed to ingestion) to every subscribed client, with
 * `sessions` threads streaming at once and `clients` clients connected (spread over the
 * threads), against a bare `ws` broadcast of the same payloads to the same number of clients,
 * measured in the same process and run.
 */
export const benchLatency = async (options: LatencyOptions) => {
  // --- the physical limit: a bare ws server broadcasting each event to its thread's clients
  const bare = await (async () => {
    const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 })
    await new Promise<void>((resolve) => wss.once("listening", () => resolve()))
    const port = (wss.address() as { port: number }).port
    const byThread = new Map<number, Array<WebSocket>>()
    const serverSockets: Array<WebSocket> = []
    wss.on("connection", (socket) => serverSockets.push(socket))
    const latencies: Array<number> = []
    const clients = await Promise.all(Array.from({ length: options.clients }, () => openClient(`ws://127.0.0.1:${port}`, {})))
    while (serverSockets.length < options.clients) await new Promise((r) => setTimeout(r, 5))
    serverSockets.forEach((s, i) => byThread.set(i % options.sessions, [...(byThread.get(i % options.sessions) ?? []), s]))
    let received = 0
    for (const c of clients)
      c.on("message", (data) => {
        const frame = JSON.parse(String(data)) as { event: { payload: { delta: string } } }
        latencies.push(performance.now() - Number(JSON.parse(frame.event.payload.delta).t))
        received++
      })
    const expected = options.sessions * options.events * (options.clients / options.sessions)
    await Promise.all(
      Array.from({ length: options.sessions }, async (_, s) => {
        for (let n = 0; n < options.events; n++) {
          const event = { ...base(`bare-${s}`, n), type: "content.delta", turnId: "t", itemId: "i", payload: { streamKind: "assistant_text", delta: `{"t":${performance.now()}}` } }
          const frame = JSON.stringify({ type: "event", threadId: event.threadId, seq: n + 1, event })
          for (const socket of byThread.get(s) ?? []) socket.send(frame)
          await new Promise((r) => setTimeout(r, options.intervalMs))
        }
      })
    )
    while (received < expected) await new Promise((r) => setTimeout(r, 5))
    clients.forEach((c) => c.terminate())
    await new Promise<void>((resolve) => wss.close(() => resolve()))
    return summarize(latencies)
  })()

  // --- Planbridge: ingestion (validate, log, project, commit) → publish → ws → client
  const dir = mkdtempSync(join(tmpdir(), "planbridge-bench-ws-"))
  const server = await startServer({ dataDir: dir, host: "127.0.0.1", port: 0, logLevel: "silent", providers: [] })
  try {
    const ingest = (events: ReadonlyArray<unknown>) =>
      server.runtime.runPromise(
        Effect.gen(function* () {
          yield* (yield* RuntimeIngestion).ingestAll(events)
        })
      )
    const threads = Array.from({ length: options.sessions }, (_, s) => `bench-${s}`)
    await ingest(threads.map((threadId) => ({ ...base(threadId, -1), type: "turn.started", turnId: "t", payload: {} })))
    const latencies: Array<number> = []
    let received = 0
    const clients = await Promise.all(
      Array.from({ length: options.clients }, async (_, i) => {
        const socket = await openClient(`${server.url.replace("http", "ws")}/ws`, { authorization: `Bearer ${server.token}` })
        const threadId = threads[i % threads.length]!
        const ready = new Promise<void>((resolve) => {
          socket.on("message", (data) => {
            const frame = JSON.parse(String(data)) as ServerFrame
            if (frame.type === "result") resolve()
            if (frame.type === "event" && frame.event.type === "content.delta") {
              latencies.push(performance.now() - Number(JSON.parse(frame.event.payload.delta).t))
              received++
            }
          })
        })
        socket.send(JSON.stringify({ type: "hello", protocolVersion: PROTOCOL_VERSION }))
        socket.send(JSON.stringify({ type: "command", id: "s", command: { type: "thread.subscribe", threadId } }))
        await ready
        return socket
      })
    )
    const expected = options.sessions * options.events * (options.clients / options.sessions)
    await Promise.all(
      threads.map(async (threadId) => {
        for (let n = 0; n < options.events; n++) {
          await ingest([{ ...base(threadId, n), type: "content.delta", turnId: "t", itemId: "i", payload: { streamKind: "assistant_text", delta: `{"t":${performance.now()}}` } }])
          await new Promise((r) => setTimeout(r, options.intervalMs))
        }
      })
    )
    const deadline = Date.now() + 30_000
    while (received < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
    clients.forEach((c) => c.terminate())
    return { bare, planbridge: summarize(latencies), delivered: received, expected }
  } finally {
    await server.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Resume time for a thread of `count` events: a client that missed the last 1,000 events
 * (backlog), a client with no cursor (snapshot), a client whose cursor is too old (snapshot).
 */
export const benchResume = async (count: number) => {
  const dir = mkdtempSync(join(tmpdir(), "planbridge-bench-resume-"))
  let server: RunningServer | undefined
  try {
    server = await startServer({ dataDir: dir, host: "127.0.0.1", port: 0, logLevel: "silent", providers: [] })
    const events: Array<RuntimeEvent> = generateEventMix({ seed: 9, count, threads: 1, prefix: "resume" })
    const threadId = events[0]!.threadId
    const running = server
    for (let i = 0; i < events.length; i += 5_000) {
      await running.runtime.runPromise(
        Effect.gen(function* () {
          yield* (yield* RuntimeIngestion).ingestAll(events.slice(i, i + 5_000))
        })
      )
    }
    const time = async (afterSeq: number | undefined) => {
      const socket = await openClient(`${running.url.replace("http", "ws")}/ws`, { authorization: `Bearer ${running.token}` })
      const started = performance.now()
      const done = new Promise<number>((resolve) => {
        socket.on("message", (data) => {
          const frame = JSON.parse(String(data)) as ServerFrame
          if (frame.type === "result") resolve(performance.now() - started)
        })
      })
      socket.send(JSON.stringify({ type: "hello", protocolVersion: PROTOCOL_VERSION }))
      socket.send(JSON.stringify({ type: "command", id: "s", command: { type: "thread.subscribe", threadId, ...(afterSeq === undefined ? {} : { afterSeq }) } }))
      const ms = await done
      socket.terminate()
      return ms
    }
    return {
      events: count,
      backlog1000Ms: await time(count - 1_000),
      snapshotMs: await time(undefined),
      tooOldCursorMs: await time(1)
    }
  } finally {
    await server?.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
