import { readFileSync } from "node:fs"
import { Worker } from "node:worker_threads"
import { pacedPrompt } from "../provider/acp/flood.ts"
import { connectLite } from "../chaos/wsLite.ts"
import { cursorServeEnv, peakRssOf, rssOf, startServe, stopServe, tempDir } from "../chaos/rig.ts"

/**
 * One hot thread (issue 31, item 5): `planbridge serve` (the real CLI, its own process) running
 * the scripted Cursor agent, which streams `count` chunks at `rate` lines a second
 * (`SCENARIO:PACED`) into one thread that `clients` WebSocket clients follow (in a worker thread
 * of their own, hotThreadClients.worker.mjs). Measured: every chunk's delivery delay (receive
 * time − when the agent wrote its line) and whether each client got every event in order.
 */
export interface DeliveryFigures {
  /** Event frames received, over all clients, and how many should have been. */
  readonly deliveries: number
  readonly expected: number
  /** Frames whose `seq` was not the one after the client's previous frame. */
  readonly outOfOrder: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  /** How long after the agent's last line was due the last delivery came (negative: before). */
  readonly tailMs: number
  /** Lines per second the agent was asked for, and events the thread got during the turn. */
  readonly rate: number
  readonly events: number
  /** CPU time (user + system, all threads) the server used from the turn's start until the clients had every event. */
  readonly serverCpuMs: number
  /**
   * The same for the server's main thread alone (the event loop, what an inspector profile
   * samples); the rest is V8's helper threads (GC, compilation) and the WAL checkpointer.
   */
  readonly serverMainThreadCpuMs?: number
}

/** A process's CPU time so far (user + system, ms), from /proc; with `thread`, one of its threads'. */
export const cpuMsOf = (pid: number, thread?: number): number => {
  const stat = thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`
  const fields = readFileSync(stat, "utf8").split(") ")[1]!.split(" ")
  // Fields 14 and 15 (utime, stime) in clock ticks of 10 ms; fields[0] is field 3.
  return (Number(fields[11]) + Number(fields[12])) * 10
}

interface WorkerReport {
  readonly histogram: Uint32Array
  readonly bucketMs: number
  readonly deliveries: number
  readonly outOfOrder: number
  readonly maxMs: number
  readonly lastReceivedAt: number
}

export const percentileOf = (histogram: Uint32Array, bucketMs: number, p: number): number => {
  const samples = histogram.reduce((a, b) => a + b, 0)
  const rank = Math.floor((p / 100) * samples)
  let seen = 0
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i]!
    if (seen > rank) return (i + 1) * bucketMs
  }
  return Number.NaN
}

/** The clients' worker: connected (and subscribed, for Planbridge) once this resolves. */
export const startHotClients = async (options: {
  readonly url: string
  readonly token?: string
  readonly threadId?: string
  readonly clients: number
}) => {
  const worker = new Worker(new URL("./hotThreadClients.worker.mjs", import.meta.url), { workerData: options })
  const failed = new Promise<never>((_, reject) => worker.once("error", reject))
  failed.catch(() => undefined)
  await Promise.race([
    failed,
    new Promise<void>((resolve) => worker.on("message", (m: { type: string }) => m.type === "ready" && resolve()))
  ])
  /** Sends `message` to the worker; resolves with its answer, the worker's message of the same type. */
  const ask = <A>(message: "report" | "reset") =>
    Promise.race([
      failed,
      new Promise<A>((resolve) => {
        const onMessage = (m: { type: string } & A) => {
          if (m.type !== message) return
          worker.off("message", onMessage)
          resolve(m)
        }
        worker.on("message", onMessage)
        worker.postMessage(message)
      })
    ])
  const report = () => ask<WorkerReport>("report")
  /** Waits (bounded) until `expected` deliveries arrived, or none arrived for `quietMs`. */
  const settle = async (expected: number, timeoutMs: number, quietMs = 2_000): Promise<WorkerReport> => {
    const deadline = Date.now() + timeoutMs
    let last = await report()
    let lastChange = Date.now()
    while (last.deliveries < expected && Date.now() < deadline && Date.now() - lastChange < quietMs) {
      await new Promise((r) => setTimeout(r, 50))
      const next = await report()
      if (next.deliveries !== last.deliveries) lastChange = Date.now()
      last = next
    }
    return last
  }
  const close = async () => {
    worker.postMessage("close")
    await worker.terminate()
  }
  /**
   * After an unmeasured warm-up of `expected` deliveries: waits for all of them, then forgets them
   * (each client's order check goes on), so that what follows is measured afresh. Throws when the
   * warm-up did not arrive whole and in order: its stragglers would be counted as the measured
   * stream's.
   */
  const warmedUp = async (expected: number): Promise<void> => {
    const warm = await settle(expected, 60_000)
    if (warm.deliveries !== expected || warm.outOfOrder > 0)
      throw new Error(
        `the warm-up did not reach the clients whole: ${warm.deliveries}/${expected} delivered, ${warm.outOfOrder} out of order`
      )
    await ask<unknown>("reset")
  }
  return { report, settle, warmedUp, close }
}

export const figuresOf = (
  r: WorkerReport,
  extra: {
    readonly expected: number
    readonly streamEndAt: number
    readonly rate: number
    readonly events: number
    readonly serverCpuMs: number
    readonly serverMainThreadCpuMs?: number
  }
): DeliveryFigures => ({
  deliveries: r.deliveries,
  expected: extra.expected,
  outOfOrder: r.outOfOrder,
  p50Ms: percentileOf(r.histogram, r.bucketMs, 50),
  p99Ms: percentileOf(r.histogram, r.bucketMs, 99),
  maxMs: r.maxMs,
  tailMs: r.lastReceivedAt - extra.streamEndAt,
  rate: extra.rate,
  events: extra.events,
  serverCpuMs: extra.serverCpuMs,
  ...(extra.serverMainThreadCpuMs === undefined ? {} : { serverMainThreadCpuMs: extra.serverMainThreadCpuMs })
})

export interface HotThreadOptions {
  readonly clients: number
  /** Chunks the agent streams, and at how many lines a second. */
  readonly count: number
  readonly rate: number
  /** Lines of an unmeasured first turn at the same rate, the clients already following (none by default). */
  readonly warmUp?: number
  /** Extra environment for the server (e.g. PLANBRIDGE_FROM_SOURCE). */
  readonly env?: Readonly<Record<string, string>>
}

export const runHotThread = async (options: HotThreadOptions): Promise<DeliveryFigures> => {
  const server = await startServe({ dataDir: tempDir("planbridge-hot-"), env: await cursorServeEnv(options.env) })
  try {
    const control = await connectLite(server.url, server.token)
    try {
      const cwd = tempDir("planbridge-hot-cwd-")
      const session = await control.command({ type: "session.start", provider: "cursor", cwd, mode: "default" })
      const threadId = String(session.threadId)
      let events = 0
      let finished: () => void = () => {}
      control.onEvent((frame) => {
        if (frame.threadId !== threadId) return
        events++
        if (frame.event.type === "turn.completed") finished()
      })
      await control.command({ type: "thread.subscribe", threadId: threadId as never })
      /** A paced turn of `count` lines; resolves once it completed (or well after it should have). */
      const pacedTurn = async (count: number) => {
        const completed = new Promise<void>((resolve) => (finished = resolve))
        await control.command({
          type: "turn.start",
          threadId: threadId as never,
          text: pacedPrompt(count, options.rate)
        })
        await Promise.race([completed, new Promise((r) => setTimeout(r, (count / options.rate) * 1000 + 60_000))])
      }
      const clients = await startHotClients({
        url: `${server.url.replace(/^http/, "ws")}/ws`,
        token: server.token,
        threadId,
        clients: options.clients
      })
      // A first turn nobody measures: what the server compiles and loads on its first stream
      // (schemas, mappings, the JIT) is done before the measured one, as in the ingest bench.
      // The clients follow from before it, so that the measured turn is a thread they have been
      // following, as in issue 31's run. Subscribed after it, each client got a snapshot of the
      // first turn (200 snapshots of ~200 KB built and written at once), and the measured turn
      // began in that storm's wake: its first ~700 lines were 100–270 ms late, the whole of its
      // p99 (PROFILE.md, "One hot thread", eleventh round).
      if (options.warmUp !== undefined && options.warmUp > 0) {
        events = 0
        await pacedTurn(options.warmUp)
        await clients.warmedUp(events * options.clients)
      }
      try {
        // Nothing happens on the thread between the subscriptions and the turn: every client
        // gets exactly the events the control client gets from here on.
        events = 0
        const cpuAtStart = cpuMsOf(server.pid)
        // The main thread's id is the process's.
        const mainCpuAtStart = cpuMsOf(server.pid, server.pid)
        const startedAt = performance.timeOrigin + performance.now()
        await pacedTurn(options.count)
        const streamMs = (options.count / options.rate) * 1000
        const expected = events * options.clients
        const report = await clients.settle(expected, 60_000)
        const serverCpuMs = cpuMsOf(server.pid) - cpuAtStart
        const serverMainThreadCpuMs = cpuMsOf(server.pid, server.pid) - mainCpuAtStart
        return figuresOf(report, {
          expected,
          streamEndAt: startedAt + streamMs,
          rate: options.rate,
          events,
          serverCpuMs,
          serverMainThreadCpuMs
        })
      } finally {
        await clients.close()
      }
    } finally {
      await control.close()
    }
  } finally {
    await stopServe(server)
  }
}

export const describeDelivery = (f: DeliveryFigures): string =>
  `${f.rate} lines/s, ${f.events} events: delivered ${f.deliveries}/${f.expected} (${f.outOfOrder} out of order); ` +
  `delay p50 ${f.p50Ms.toFixed(1)} ms, p99 ${f.p99Ms.toFixed(1)} ms, max ${f.maxMs.toFixed(1)} ms; ` +
  `last delivery ${f.tailMs.toFixed(0)} ms after the stream's end; server CPU ${f.serverCpuMs} ms`

/**
 * The server's peak memory growth for big lines, at most this many times the bytes of the
 * lines (EVENTS.md, Limits): one 20 MiB line with one subscriber, and three 12 MiB lines of one
 * turn with ten subscribers (issue 31, item 5). Measured 7.1–9.3×; about 30% above the worst.
 */
export const BIG_LINE_BOUND = 12

/**
 * Big lines (issue 31, item 5): the scripted agent writes `chunks` chunks (one unless given) of
 * `mib` MiB, each a single line (`SCENARIO:HUGE_CHUNK`), in one turn; `subscribers` clients
 * follow the thread. The server's peak resident memory (the kernel's high-water mark) over what
 * it had before the turn; `lineBytes`: the bytes of all the big lines.
 */
export const runBigLine = async (options: {
  readonly mib: number
  readonly chunks?: number
  readonly subscribers: number
  readonly env?: Readonly<Record<string, string>>
}) => {
  const chunks = options.chunks ?? 1
  const server = await startServe({ dataDir: tempDir("planbridge-bigline-"), env: await cursorServeEnv(options.env) })
  const clients: Array<Awaited<ReturnType<typeof connectLite>>> = []
  try {
    const control = await connectLite(server.url, server.token)
    clients.push(control)
    const cwd = tempDir("planbridge-bigline-cwd-")
    const session = await control.command({ type: "session.start", provider: "cursor", cwd, mode: "default" })
    const threadId = String(session.threadId)
    /** Resolves once this client got the turn's end: every client's last frame of the turn. */
    const turnEnd = (client: (typeof clients)[number]) =>
      new Promise<void>((resolve) =>
        client.onEvent((frame) => frame.threadId === threadId && frame.event.type === "turn.completed" && resolve())
      )
    const ended: Array<Promise<void>> = [turnEnd(control)]
    await control.command({ type: "thread.subscribe", threadId: threadId as never })
    for (let i = 1; i < options.subscribers; i++) {
      const client = await connectLite(server.url, server.token)
      clients.push(client)
      ended.push(turnEnd(client))
      await client.command({ type: "thread.subscribe", threadId: threadId as never })
    }
    const before = rssOf(server.pid) ?? 0
    await control.command({
      type: "turn.start",
      threadId: threadId as never,
      text: `SCENARIO:HUGE_CHUNK count=${options.mib} chunks=${chunks}`
    })
    // The peak is read once every subscriber has had every frame (the frames' bytes included).
    const timedOut = await Promise.race([
      Promise.all(ended).then(() => false),
      new Promise<boolean>((r) => setTimeout(() => r(true), 300_000).unref())
    ])
    if (timedOut) throw new Error(`big lines: not every subscriber got the turn's end within 300 s`)
    const peak = peakRssOf(server.pid) ?? 0
    return { lineBytes: chunks * options.mib * 2 ** 20, rssBefore: before, peakGrowth: peak - before }
  } finally {
    for (const client of clients) await client.close()
    await stopServe(server)
  }
}
