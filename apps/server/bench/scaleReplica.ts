// One replica of the scale bench, in a process of its own (started by scale.ts with `fork`, through
// bin/run-ts.mjs): a `planbridge` server on the PostgreSQL behind the delay proxy, its sessions
// streaming through the server's own ingestion, and a client per session (in a worker thread)
// subscribed over the server's WebSocket, measuring event → client. Told what to do on argv (JSON),
// it reports over the IPC channel: `ready`, then `{type: "done", …}` after the parent's `go`.
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Worker } from "node:worker_threads"
import { startServer } from "../src/http/HttpServer.ts"
import { RuntimeIngestion } from "../src/orchestration/RuntimeIngestion.ts"

interface ReplicaTask {
  readonly store: string
  readonly index: number
  readonly sessions: number
  /** Events each session streams (closed loop: the next once the last is committed). */
  readonly events: number
}
const task = JSON.parse(process.argv[2] ?? "{}") as ReplicaTask
const send = (message: unknown) => process.send?.(message)
/** Each session's first events are delivered but not measured (cold code paths). */
const WARMUP = 2
const now = () => performance.timeOrigin + performance.now()

const dir = mkdtempSync(join(tmpdir(), "planbridge-bench-scale-"))
const server = await startServer({
  dataDir: dir,
  host: "127.0.0.1",
  port: 0,
  logLevel: "silent",
  providers: [],
  store: task.store
})
const threads = Array.from({ length: task.sessions }, (_, s) => `scale-r${task.index}-s${s}`)
const ingest = (events: ReadonlyArray<unknown>) =>
  server.runtime.runPromise(
    Effect.gen(function* () {
      yield* (yield* RuntimeIngestion).ingestAll(events)
    })
  )
const event = (threadId: string, n: number, type: string, payload: unknown) => ({
  eventId: `${threadId}-e${n}`,
  provider: "codex",
  threadId,
  createdAt: new Date().toISOString(),
  turnId: "t",
  ...(type === "content.delta" ? { itemId: "i" } : {}),
  type,
  payload
})
const delta = (threadId: string, n: number) =>
  event(threadId, n, "content.delta", {
    streamKind: "assistant_text",
    delta: JSON.stringify(n < WARMUP ? { t: now(), warmup: true } : { t: now() })
  })

await ingest(threads.map((threadId) => event(threadId, -1, "turn.started", {})))
const total = (task.events + WARMUP) * task.sessions
const clients = new Worker(new URL("./wsClients.worker.mjs", import.meta.url), {
  workerData: {
    url: `${server.url.replace("http", "ws")}/ws`,
    token: server.token,
    threads,
    expected: task.events * task.sessions,
    total,
    planbridge: true
  }
})
const histogram = new Promise<{ histogram: Uint32Array; bucketMs: number }>((resolve, reject) => {
  clients.on("message", (m: { type: string; histogram?: Uint32Array; bucketMs?: number }) => {
    if (m.type === "done") resolve({ histogram: m.histogram!, bucketMs: m.bucketMs! })
  })
  clients.once("error", reject)
})
await new Promise<void>((resolve, reject) => {
  clients.on("message", (m: { type: string }) => m.type === "ready" && resolve())
  clients.once("error", reject)
})
await new Promise<void>((resolve) => {
  process.on("message", (m) => m === "go" && resolve())
  send({ type: "ready" })
})

const started = performance.now()
const cpu = process.cpuUsage()
// The main thread's share of the run spent running (not waiting): near 1, the replica is CPU-bound.
const utilization = performance.eventLoopUtilization()
await Promise.all(
  threads.map(async (threadId) => {
    for (let n = 0; n < task.events + WARMUP; n++) await ingest([delta(threadId, n)])
  })
)
const seconds = (performance.now() - started) / 1000
const used = process.cpuUsage(cpu)
const busy = performance.eventLoopUtilization(utilization).utilization
let timer: NodeJS.Timeout | undefined
const measured = await Promise.race([
  histogram,
  new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), 30_000)))
])
clearTimeout(timer)
const percentile = (p: number) => {
  if (measured === undefined) return Number.NaN
  const samples = measured.histogram.reduce((a, b) => a + b, 0)
  const rank = Math.floor((p / 100) * samples)
  let seen = 0
  for (let i = 0; i < measured.histogram.length; i++) {
    seen += measured.histogram[i]!
    if (seen > rank) return (i + 0.5) * measured.bucketMs
  }
  return Number.NaN
}
send({
  type: "done",
  events: total,
  seconds,
  cpuSeconds: (used.user + used.system) / 1e6,
  mainThreadBusy: busy,
  delivered: measured !== undefined,
  p50: percentile(50),
  p99: percentile(99)
})
clients.postMessage("close")
await clients.terminate()
await server.close()
rmSync(dir, { recursive: true, force: true })
process.disconnect?.()
