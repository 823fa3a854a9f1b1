// `npm run bench -- scale` (issue 32): 1, 2 and 4 replicas × 50 streaming sessions on one
// PostgreSQL, each replica reaching it through a simulated network (a userspace proxy adding 1 ms
// each way: this kernel has no netem), against bare clients doing the same inserts over the same
// link in the same run.
import { fork } from "node:child_process"
import { loadavg } from "node:os"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"
import pg from "pg"
import type { TestPostgres } from "../test/support/postgres.ts"

/** The simulated network: this much delay in each direction between a replica and PostgreSQL. */
export const LINK_DELAY_MS = 1

export interface ScaleOptions {
  readonly replicas: ReadonlyArray<number>
  readonly sessions: number
  /** Events each session streams, each once the one before is committed (the provider's pipe backs up). */
  readonly events: number
}

/** Starts the delay proxy in front of PostgreSQL's port; resolves with its own port and a stop. */
const startProxy = async (targetPort: number) => {
  const worker = new Worker(new URL("./scaleProxy.worker.mjs", import.meta.url), {
    workerData: { targetPort, delayMs: LINK_DELAY_MS }
  })
  const port = await new Promise<number>((resolve, reject) => {
    worker.on("message", (m: { type: string; port: number }) => m.type === "listening" && resolve(m.port))
    worker.once("error", reject)
  })
  return {
    port,
    stop: async () => {
      worker.postMessage("close")
      await worker.terminate()
    }
  }
}

const percentiles = (times: Array<number>) => {
  times.sort((a, b) => a - b)
  return { p50: times[Math.floor(times.length / 2)]!, p99: times[Math.floor(times.length * 0.99)]! }
}

/** Round trips over the link: `select 1`, and a one-row INSERT committed on its own. */
const measureLink = async (url: string, samples = 300) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query("create table if not exists bare_commit (id bigserial primary key, payload text not null)")
  const roundTrips: Array<number> = []
  const commits: Array<number> = []
  for (let i = 0; i < samples; i++) {
    let started = performance.now()
    await client.query("select 1")
    roundTrips.push(performance.now() - started)
    started = performance.now()
    await client.query("insert into bare_commit (payload) values ($1)", ["{}"])
    commits.push(performance.now() - started)
  }
  await client.end()
  return { roundTrip: percentiles(roundTrips), commit: percentiles(commits) }
}

/**
 * The bare side: `clients` connections at once over the link, each committing `rounds` batches of
 * `rows` events (the same JSON a replica stores, one multi-row INSERT and its COMMIT in one round
 * trip, the best a client can do), into a one-table log with the store's two unique indexes.
 */
const bareInserts = async (url: string, clients: number, rounds: number, rows: number) => {
  const setup = new pg.Client({ connectionString: url })
  await setup.connect()
  await setup.query(`create table bare_events (seq bigserial primary key, event_id text not null unique,
    thread_id text not null, thread_seq int not null, event text not null, unique (thread_id, thread_seq))`)
  await setup.end()
  const connections = await Promise.all(
    Array.from({ length: clients }, async () => {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      return client
    })
  )
  const payload = (thread: string, n: number) =>
    JSON.stringify({
      eventId: `${thread}-e${n}`,
      provider: "codex",
      threadId: thread,
      createdAt: new Date().toISOString(),
      turnId: "t",
      itemId: "i",
      type: "content.delta",
      payload: { streamKind: "assistant_text", delta: JSON.stringify({ t: performance.now() }) }
    })
  const started = performance.now()
  await Promise.all(
    connections.map(async (client, c) => {
      for (let round = 0; round < rounds; round++) {
        const threads = Array.from({ length: rows }, (_, s) => `bare-c${c}-s${s}`)
        const values = threads.map(
          (t) => `(${pg.escapeLiteral(`${t}-e${round}`)}, ${pg.escapeLiteral(t)}, ${round + 1},
          ${pg.escapeLiteral(payload(t, round))})`
        )
        await client.query(
          `begin; insert into bare_events (event_id, thread_id, thread_seq, event) values ${values.join(",")}; commit`
        )
      }
    })
  )
  const seconds = (performance.now() - started) / 1000
  await Promise.all(connections.map((c) => c.end()))
  return { events: clients * rounds * rows, seconds, rate: (clients * rounds * rows) / seconds }
}

interface ReplicaResult {
  readonly events: number
  readonly seconds: number
  readonly cpuSeconds: number
  /** The replica's main thread's event-loop utilization over the run (0–1). */
  readonly mainThreadBusy: number
  readonly delivered: boolean
  readonly p50: number
  readonly p99: number
}

/**
 * What the database's sessions wait on while the replicas run (`PLANBRIDGE_BENCH_WAITS=1`): every
 * 20 ms, `pg_stat_activity`'s wait events of the active sessions (a lock wait names the lock), to
 * find what serialises appends. Returns a stop that resolves with the counts, most frequent first.
 */
const sampleWaits = async (url: string) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const counts = new Map<string, number>()
  let samples = 0
  let running = true
  const loop = (async () => {
    while (running) {
      const { rows } = await client.query<{ w: string }>(
        `select coalesce(a.wait_event_type || ':' || a.wait_event, 'cpu') ||
           coalesce(' ' || l.locktype || coalesce(':' || l.objid::text, '') || ' ' || l.mode, '') ||
           ' (' || left(regexp_replace(a.query, '[[:space:]]+', ' ', 'g'), 40) || ')' as w
         from pg_stat_activity a left join pg_locks l on l.pid = a.pid and not l.granted
         where a.state = 'active' and a.pid <> pg_backend_pid() and a.backend_type = 'client backend'`
      )
      samples++
      for (const { w } of rows) counts.set(w, (counts.get(w) ?? 0) + 1)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  return async () => {
    running = false
    await loop
    await client.end()
    return { samples, waits: [...counts].sort((a, b) => b[1] - a[1]) }
  }
}

/**
 * `PLANBRIDGE_BENCH_CPU_PROF=<dir>`: each replica writes a V8 CPU profile (main thread and its
 * clients' worker) into that directory, and is let exit on its own so that it can.
 */
const profileDir = process.env.PLANBRIDGE_BENCH_CPU_PROF

/** Starts `count` replica processes on `store`, lets them stream at once, and collects what each measured. */
const runReplicas = async (store: string, count: number, options: ScaleOptions) => {
  const entry = fileURLToPath(new URL("./scaleReplica.ts", import.meta.url))
  const runTs = fileURLToPath(new URL("../bin/run-ts.mjs", import.meta.url))
  const children = Array.from({ length: count }, (_, index) =>
    fork(runTs, [entry, JSON.stringify({ store, index, sessions: options.sessions, events: options.events })], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      ...(profileDir === undefined
        ? {}
        : { execArgv: [...process.execArgv, "--cpu-prof", `--cpu-prof-dir=${profileDir}`] })
    })
  )
  const exited = children.map(
    (child) =>
      new Promise<void>((resolve) => (child.exitCode === null ? child.once("exit", () => resolve()) : resolve()))
  )
  const messages = children.map((child) => {
    const ready = new Promise<void>((resolve, reject) => {
      child.on("message", (m: { type: string }) => m.type === "ready" && resolve())
      child.once("exit", (code) => reject(new Error(`a replica exited with ${code} before it was ready`)))
    })
    const done = new Promise<ReplicaResult>((resolve, reject) => {
      child.on("message", (m: { type: string } & ReplicaResult) => m.type === "done" && resolve(m))
      child.once("exit", (code) => reject(new Error(`a replica exited with ${code} before it was done`)))
    })
    return { ready, done }
  })
  try {
    await Promise.all(messages.map((m) => m.ready))
    for (const child of children) child.send("go")
    return await Promise.all(messages.map((m) => m.done))
  } finally {
    if (profileDir !== undefined)
      await Promise.race([Promise.all(exited), new Promise((resolve) => setTimeout(resolve, 20_000))])
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL")
  }
}

/** The run for one replica count, and its bare side over the same link. */
export const benchScale = async (postgres: TestPostgres, options: ScaleOptions) => {
  const proxy = await startProxy(postgres.port)
  const viaProxy = (url: string) => url.replace(`:${postgres.port}/`, `:${proxy.port}/`)
  try {
    const link = await measureLink(viaProxy(await postgres.createDatabase("bench_scale_link")))
    const runs = []
    for (const replicas of options.replicas) {
      const loadBefore = loadavg()[0]!
      const url = await postgres.createDatabase(`bench_scale_${replicas}`)
      const stopSampling = process.env.PLANBRIDGE_BENCH_WAITS === "1" ? await sampleWaits(url) : undefined
      const results = await runReplicas(viaProxy(url), replicas, options)
      if (stopSampling !== undefined) {
        const { samples, waits } = await stopSampling()
        console.log(
          `  waits at ${replicas} replica(s), ${samples} samples: ${waits.map(([w, n]) => `${w} ${n}`).join(", ")}`
        )
      }
      const seconds = Math.max(...results.map((r) => r.seconds))
      const events = results.reduce((sum, r) => sum + r.events, 0)
      const counter = new pg.Client({ connectionString: url })
      await counter.connect()
      // Each append is one transaction: its rows share their `xmin`.
      const { rows } = await counter.query<{ events: string; appends: string }>(
        "select count(*) as events, count(distinct xmin::text) as appends from events where event like '%content.delta%'"
      )
      await counter.end()
      const bare = await bareInserts(
        viaProxy(await postgres.createDatabase(`bench_scale_bare_${replicas}`)),
        replicas,
        Math.round(events / replicas / options.sessions),
        options.sessions
      )
      const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
      const cpuSeconds = results.reduce((sum, r) => sum + r.cpuSeconds, 0)
      // Whether the replicas are CPU-bound: their CPU per event (main thread and clients' worker),
      // and how much of the run each one's main thread spent running.
      console.log(
        `  ${replicas} replica(s): replicas' CPU ${((cpuSeconds * 1000) / events).toFixed(3)} ms per event; main ` +
          `threads busy ${results.map((r) => `${Math.round(r.mainThreadBusy * 100)}%`).join(", ")} of the run`
      )
      runs.push({
        replicas,
        events,
        stored: Number(rows[0]!.events),
        appends: Number(rows[0]!.appends),
        seconds,
        rate: events / seconds,
        appendRate: Number(rows[0]!.appends) / seconds,
        cpuSeconds,
        delivered: results.every((r) => r.delivered),
        p50: median(results.map((r) => r.p50)),
        p99: Math.max(...results.map((r) => r.p99)),
        bare,
        load: { before: loadBefore, after: loadavg()[0]! }
      })
    }
    return { link, runs }
  } finally {
    await proxy.stop()
  }
}
