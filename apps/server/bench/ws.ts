import { Worker } from "node:worker_threads"
import { Effect, Layer, ManagedRuntime } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import WebSocket, { WebSocketServer } from "ws"
import { startServer } from "../src/http/HttpServer.ts"
import { RuntimeIngestion } from "../src/orchestration/RuntimeIngestion.ts"
import { collectGarbage, exposedGc } from "./collectGarbage.ts"
import { postgresStore } from "../src/persistence/postgres/PgStore.ts"

/** The clients' latency histogram (see wsClients.worker.mjs). */
interface Histogram {
  readonly histogram: Uint32Array
  readonly bucketMs: number
}
const summarize = ({ histogram, bucketMs }: Histogram) => {
  const samples = histogram.reduce((a, b) => a + b, 0)
  const percentile = (p: number) => {
    const rank = Math.floor((p / 100) * samples)
    let seen = 0
    for (let i = 0; i < histogram.length; i++) {
      seen += histogram[i]!
      if (seen > rank) return (i + 0.5) * bucketMs
    }
    return NaN
  }
  return { samples, p50: percentile(50), p99: percentile(99) }
}

/** Memory of this process (server, bare side and the clients' worker) and of the main heap (the server's). */
export interface MemorySample {
  readonly atMs: number
  readonly rssMb: number
  readonly heapMb: number
}
/**
 * A full collection before a soak sample: the heap otherwise rides a GC sawtooth (55 ↔ 190 MB in
 * one soak) that hides or fakes a trend; what survives a full GC is what a leak would grow.
 */
const fullGc = (): (() => void) => {
  const gc = exposedGc()
  if (gc === undefined) throw new Error("a soak samples the live heap: run node with --expose-gc (npm run bench does)")
  return gc
}
const memorySample = (started: number, gc?: () => void): MemorySample => {
  gc?.()
  const { rss, heapUsed } = process.memoryUsage()
  return { atMs: performance.now() - started, rssMb: rss / 2 ** 20, heapMb: heapUsed / 2 ** 20 }
}

const base = (threadId: string, n: number) => ({
  eventId: `${threadId}-e${n}`,
  provider: "codex",
  threadId,
  createdAt: new Date().toISOString()
})
/** Absolute, high-resolution time: comparable between the main thread and the clients' worker. */
const now = () => performance.timeOrigin + performance.now()
/**
 * Each session's first events are a warm-up, delivered but not measured (`warmup` in the delta
 * text), on both sides. Profiled: the first event after the server starts took ~20 ms to every
 * client (cold code: Schema decoding and projection of a first `content.delta`, the first live
 * fan-out), and with 50 sessions × 200 clients that one round is 2.5 % of the deliveries, so it
 * alone was the p99 (see PROFILE.md, "p99 tail").
 */
const WARMUP_EVENTS = 2
const delta = (threadId: string, n: number) => ({
  ...base(threadId, n),
  type: "content.delta",
  turnId: "t",
  itemId: "i",
  payload: {
    streamKind: "assistant_text",
    delta: JSON.stringify(n < WARMUP_EVENTS ? { t: now(), warmup: true } : { t: now() })
  }
})

/** Starts the clients in a worker thread; resolves once they are connected (and subscribed). */
const startClients = async (options: {
  url: string
  token?: string
  threads: ReadonlyArray<string>
  /** Deliveries measured (warm-up ones excluded). */
  expected: number
  /** All deliveries, warm-up included: the clients are done once they have them all. */
  total: number
  planbridge: boolean
}) => {
  const worker = new Worker(new URL("./wsClients.worker.mjs", import.meta.url), { workerData: options })
  const done = new Promise<Histogram>((resolve, reject) => {
    worker.on("message", (m: { type: string } & Partial<Histogram>) => {
      if (m.type === "done") resolve({ histogram: m.histogram!, bucketMs: m.bucketMs! })
    })
    worker.once("error", reject)
  })
  await new Promise<void>((resolve, reject) => {
    worker.on("message", (m: { type: string }) => m.type === "ready" && resolve())
    worker.once("error", reject)
  })
  return {
    latencies: (timeoutMs: number) => {
      let timer: NodeJS.Timeout | undefined
      const late = new Promise<Histogram>((_, reject) => {
        timer = setTimeout(() => reject(new Error("clients did not receive every event")), timeoutMs)
      })
      // Cleared once the clients are done: a pending timer kept the bench process alive 30 s.
      return Promise.race([done, late]).finally(() => clearTimeout(timer))
    },
    close: async () => {
      worker.postMessage("close")
      await worker.terminate()
    }
  }
}

export interface LatencyOptions {
  readonly sessions: number
  readonly clients: number
  /** Events per session. */
  readonly events: number
  /** Delay between a session's events. */
  readonly intervalMs: number
  /** Samples memory this often while Planbridge streams (a soak); none when absent. */
  readonly sampleEveryMs?: number
  /** A PostgreSQL URL: the server keeps its log there instead of SQLite. */
  readonly store?: string
  /**
   * With `store`: the events are ingested by a second server (a replica on the same database)
   * and reach the clients' server through PostgreSQL (NOTIFY, rows read back).
   */
  readonly viaReplica?: boolean
}

/**
 * Latency from a provider event (handed to ingestion) to every subscribed client, with
 * `sessions` threads streaming at once and `clients` clients connected (spread over the
 * threads, running in a worker thread as a separate client process would), against a bare
 * `ws` server broadcasting the same frames to the same clients, measured in the same run.
 */
export const benchLatency = async (options: LatencyOptions) => {
  const threads = Array.from({ length: options.sessions }, (_, s) => `bench-${s}`)
  const clientThreads = Array.from({ length: options.clients }, (_, i) => threads[i % threads.length]!)
  const stream = async (events: number, send: (threadId: string, n: number) => Promise<void> | void) =>
    Promise.all(
      threads.map(async (threadId) => {
        for (let n = 0; n < events; n++) {
          await send(threadId, n)
          await new Promise((r) => setTimeout(r, options.intervalMs))
        }
      })
    )

  // --- the physical limit: a bare ws server broadcasting each frame to its thread's clients
  // (in a soak, for the usual short run only: the soak is about Planbridge's memory)
  const bareEvents = options.sampleEveryMs === undefined ? options.events : Math.min(options.events, 40)
  const bare = await (async () => {
    const expected = bareEvents * options.clients
    const total = (bareEvents + WARMUP_EVENTS) * options.clients
    const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 })
    await new Promise<void>((resolve) => wss.once("listening", () => resolve()))
    const byThread = new Map<string, Array<WebSocket>>()
    wss.on("connection", (socket, req) => {
      const threadId = new URL(req.url ?? "/", "http://x").searchParams.get("thread") ?? ""
      byThread.set(threadId, [...(byThread.get(threadId) ?? []), socket])
    })
    const clients = await startClients({
      url: `ws://127.0.0.1:${(wss.address() as { port: number }).port}`,
      threads: clientThreads,
      expected,
      total,
      planbridge: false
    })
    collectGarbage()
    await stream(bareEvents + WARMUP_EVENTS, (threadId, n) => {
      const frame = JSON.stringify({ type: "event", threadId, seq: n + 1, event: delta(threadId, n) })
      for (const socket of byThread.get(threadId) ?? []) socket.send(frame)
    })
    const latencies = await clients.latencies(30_000)
    await clients.close()
    await new Promise<void>((resolve) => wss.close(() => resolve()))
    return summarize(latencies)
  })()

  // --- Planbridge: ingestion (validate, log, project, commit) → publish → ws → client
  const dir = mkdtempSync(join(tmpdir(), "planbridge-bench-ws-"))
  const serverOn = (dataDir: string) =>
    startServer({
      dataDir,
      host: "127.0.0.1",
      port: 0,
      logLevel: "silent",
      providers: [],
      ...(options.store === undefined ? {} : { store: options.store })
    })
  const server = await serverOn(dir)
  // Another process's ingestion on the same database, as a replica's (its own pool, LISTEN and origin).
  const writer =
    options.viaReplica === true && options.store !== undefined
      ? ManagedRuntime.make(RuntimeIngestion.layer.pipe(Layer.provideMerge(postgresStore({ url: options.store }))))
      : server.runtime
  const expected = options.events * options.clients
  try {
    const ingest = (events: ReadonlyArray<unknown>) =>
      writer.runPromise(
        Effect.gen(function* () {
          yield* (yield* RuntimeIngestion).ingestAll(events)
        })
      )
    await ingest(threads.map((threadId) => ({ ...base(threadId, -1), type: "turn.started", turnId: "t", payload: {} })))
    const clients = await startClients({
      url: `${server.url.replace("http", "ws")}/ws`,
      token: server.token,
      threads: clientThreads,
      expected,
      total: (options.events + WARMUP_EVENTS) * options.clients,
      planbridge: true
    })
    collectGarbage()
    const started = performance.now()
    const gc = options.sampleEveryMs === undefined ? undefined : fullGc()
    const memory: Array<MemorySample> = [memorySample(started, gc)]
    const sampler =
      options.sampleEveryMs === undefined
        ? undefined
        : setInterval(() => memory.push(memorySample(started, gc)), options.sampleEveryMs)
    await stream(options.events + WARMUP_EVENTS, (threadId, n) => ingest([delta(threadId, n)]))
    const latencies = await clients.latencies(30_000)
    clearInterval(sampler)
    // With every session streamed and every client still connected.
    memory.push(memorySample(started, gc))
    await clients.close()
    const planbridge = summarize(latencies)
    return { bare, planbridge, delivered: planbridge.samples, expected, memory }
  } finally {
    if (writer !== server.runtime) await writer.dispose()
    await server.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
