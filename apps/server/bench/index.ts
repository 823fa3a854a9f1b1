// `npm run bench [-- <parts…>] [--soak=<seconds>] [--snapshot-1m]`: each figure of issue 17
// next to its limit (measured in the same run) and its goal, with the ratio; a figure that misses
// its goal says so. Parts: ingest, latency, hot, resume, snapshot, startup, codex, postgres, scale (all by
// default). It runs in the loopback-only network namespace (the codex part starts the real app-server, the
// postgres and scale parts a throw-away PostgreSQL 15).
import { availableParallelism } from "node:os"
import { benchIngest, ingestWalFramesNote } from "./ingest.ts"
import { note, report, reportAtMost, summary } from "./report.ts"

const args = process.argv.slice(2)
const parts = ["ingest", "latency", "hot", "resume", "snapshot", "startup", "codex", "postgres", "scale"] as const
const which = new Set(args.filter((a) => !a.startsWith("--")))
// A misspelt part or flag would otherwise run nothing and still report "every figure meets its goal".
const unknownParts = [...which].filter((part) => !parts.some((known) => known === part))
const unknownFlags = args.filter((a) => a.startsWith("--") && !a.startsWith("--soak=") && a !== "--snapshot-1m")
if (unknownParts.length > 0 || unknownFlags.length > 0) {
  process.stderr.write(
    `bench: unknown ${[...unknownParts.map((p) => `part '${p}'`), ...unknownFlags.map((f) => `flag '${f}'`)].join(", ")}\n` +
      `usage: npm run bench [-- <part>…] [--soak=<seconds>] [--snapshot-1m]; parts: ${parts.join(", ")}\n`
  )
  process.exit(2)
}
const all = which.size === 0
const soakSeconds = Number(args.find((a) => a.startsWith("--soak="))?.slice("--soak=".length) ?? 0)
if (!Number.isInteger(soakSeconds) || soakSeconds < 0) {
  process.stderr.write(
    `bench: --soak takes a whole number of seconds, not '${args.find((a) => a.startsWith("--soak="))}'\n`
  )
  process.exit(2)
}
const snapshotSizes = args.includes("--snapshot-1m") ? [10_000, 100_000, 1_000_000] : [10_000, 100_000]

const median = (xs: ReadonlyArray<number>): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}
const ms = (x: number) => `${x.toFixed(2)} ms`
/** The least-squares slope of y over x. */
const slopePerMinute = (points: ReadonlyArray<{ x: number; y: number }>): number => {
  const n = points.length
  const mx = points.reduce((a, p) => a + p.x, 0) / n
  const my = points.reduce((a, p) => a + p.y, 0) / n
  const sxy = points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0)
  const sxx = points.reduce((a, p) => a + (p.x - mx) ** 2, 0)
  return sxx === 0 ? 0 : sxy / sxx
}

if (all || which.has("ingest")) {
  // A full-size warm-up run, so that JIT compilation counts against neither side (a small one
  // left the larger ingestion code paths half-compiled in the first measured run).
  await benchIngest({ count: 50_000, batch: 500 })
  // Both sides are measured in every run; the median of a few runs tames a shared machine.
  const runs = []
  for (let i = 0; i < 3; i++) {
    const r = await benchIngest({ count: 50_000, batch: 500 })
    runs.push(r)
    note(
      `ingest run ${i + 1}: planbridge ${Math.round(r.ourRate)} ev/s, bare SQLite ${Math.round(r.bareRate)} ev/s, ` +
        `ratio ${r.ratio.toFixed(3)}, CPU-time ratio ${r.cpuRatio.toFixed(3)}; ` +
        `validated log with the per-thread index ${Math.round(r.ceilingRate)} ev/s, ratio ${r.ceilingRatio.toFixed(3)}`
    )
  }
  report({
    name: `ingest (${runs[0]!.events} events in batches of ${runs[0]!.batch}, median of ${runs.length} runs)`,
    value: `${Math.round(median(runs.map((x) => x.ourRate)))} ev/s`,
    limit: `bare batched SQLite insert ${Math.round(median(runs.map((x) => x.bareRate)))} ev/s`,
    goal: "≥ 0.5× the limit",
    ratio: median(runs.map((x) => x.ratio)),
    atLeast: 0.5
  })
  note(`ingest CPU-time ratio ${median(runs.map((x) => x.cpuRatio)).toFixed(3)} (steadier on a shared machine)`)
  note(
    `the ceiling of any ingestion with the guarantees (each event validated and appended to a log with the ` +
      `per-thread index, batched, no projection, no publish, no checkpoint): ratio ` +
      `${median(runs.map((x) => x.ceilingRatio)).toFixed(3)}; planbridge to that ceiling ` +
      `${median(runs.map((x) => x.ourRate / x.ceilingRate)).toFixed(3)}`
  )
  note(await ingestWalFramesNote({ count: 50_000, batch: 500 }))
}

if (all || which.has("latency")) {
  const { benchLatency } = await import("./ws.ts")
  const soak = soakSeconds > 0
  const options = {
    sessions: 50,
    clients: 200,
    intervalMs: 20,
    events: soak ? Math.ceil((soakSeconds * 1000) / 20) : 40,
    ...(soak ? { sampleEveryMs: 30_000 } : {})
  }
  // A p99 of one run is a few dozen deliveries, and the bare broadcast's own p99 moved between 0.8
  // and 17 ms from run to run on this machine: both sides are measured in every run, and the
  // median of a few runs' ratios is reported, like the ingest's.
  const runs = []
  for (let i = 0; i < (soak ? 1 : 5); i++) {
    const run = await benchLatency(options)
    runs.push(run)
    note(
      `latency run ${i + 1}: planbridge p50 ${ms(run.planbridge.p50)} p99 ${ms(run.planbridge.p99)}, ` +
        `bare ws p50 ${ms(run.bare.p50)} p99 ${ms(run.bare.p99)}` +
        (soak ? ` (a soak: the bare side streams only its usual 40 events, so the two are not compared)` : "")
    )
  }
  const r = runs[runs.length - 1]!
  if (!soak) {
    const what = `${options.sessions} sessions streaming, ${options.clients} clients, ${r.planbridge.samples} deliveries, median of ${runs.length} runs`
    report({
      name: `event → client p50 (${what})`,
      value: ms(median(runs.map((x) => x.planbridge.p50))),
      limit: `bare ws broadcast ${ms(median(runs.map((x) => x.bare.p50)))}`,
      goal: "within 3× of the limit",
      ratio: median(runs.map((x) => x.bare.p50 / x.planbridge.p50)),
      atLeast: 1 / 3
    })
    report({
      name: "event → client p99",
      value: ms(median(runs.map((x) => x.planbridge.p99))),
      limit: `bare ws broadcast ${ms(median(runs.map((x) => x.bare.p99)))}`,
      goal: "within 2× of the limit",
      ratio: median(runs.map((x) => x.bare.p99 / x.planbridge.p99)),
      atLeast: 0.5
    })
  }
  note(`delivered ${r.delivered}/${r.expected}`)
  const last = r.memory[r.memory.length - 1]!
  note(
    `memory with ${options.sessions} sessions and ${options.clients} clients (bench process: server, bare side and clients' worker): ` +
      `RSS ${last.rssMb.toFixed(0)} MB, server heap ${last.heapMb.toFixed(0)} MB`
  )
  if (soak) {
    const samples = r.memory.map((m) => `${(m.atMs / 1000).toFixed(0)}s ${m.rssMb.toFixed(0)}/${m.heapMb.toFixed(0)}`)
    note(`soak of ${soakSeconds} s, RSS/heap MB over time: ${samples.join(", ")}`)
    // Soak samples are taken after a full GC (bench/ws.ts), so they are the live heap; a leak shows
    // as a positive slope. The first third is the warm-up (caches, JIT, the clients connecting).
    const steady = r.memory.slice(Math.floor(r.memory.length / 3))
    const slope = slopePerMinute(steady.map((m) => ({ x: m.atMs / 60_000, y: m.heapMb })))
    const growth = slope * (soakSeconds / 60)
    report({
      name: `soak: live server heap (after a full GC) over the last two thirds of ${soakSeconds} s, trend per ${soakSeconds} s`,
      value: `${growth.toFixed(1)} MB (${slope.toFixed(2)} MB/min)`,
      goal: "no growth trend (≤ 10 MB)",
      ratio: 10 / Math.max(growth, 0.1),
      atLeast: 1
    })
  }
}

if (all || which.has("hot")) {
  const { benchHotThread } = await import("./hotThread.ts")
  const { describeDelivery } = await import("../test/support/hotThread.ts")
  const clients = 200
  const r = await benchHotThread({ clients, count: 5_000 })
  for (const { rate, planbridge, bare } of r.sides) {
    const what = `one thread, ${clients} clients, agent at ${rate >= 1_000_000 ? "its maximum rate" : `${rate} lines/s`}`
    note(`hot thread ${what}: planbridge ${describeDelivery(planbridge)}`)
    note(`hot thread ${what}: bare ws ${describeDelivery(bare)}`)
    report({
      name: `hot thread event → client p50 (${what})`,
      value: ms(planbridge.p50Ms),
      limit: `bare ws broadcast of the same frames ${ms(bare.p50Ms)}`,
      goal: "within 3× of the limit",
      ratio: bare.p50Ms / planbridge.p50Ms,
      atLeast: 1 / 3
    })
    report({
      name: `hot thread event → client p99 (${what})`,
      value: ms(planbridge.p99Ms),
      limit: `bare ws broadcast of the same frames ${ms(bare.p99Ms)}`,
      goal: "within 2× of the limit",
      ratio: bare.p99Ms / planbridge.p99Ms,
      atLeast: 0.5
    })
  }
  // Memory for big lines (issue 31, item 5): one 20 MiB line with one subscriber (run with the
  // hot thread above), then three 12 MiB lines of one turn with ten subscribers.
  const { BIG_LINE_BOUND, runBigLine } = await import("../test/support/hotThread.ts")
  const { cleanup } = await import("../test/chaos/rig.ts")
  const threeLines = await runBigLine({ mib: 12, chunks: 3, subscribers: 10, env: { PLANBRIDGE_FROM_SOURCE: "1" } })
  cleanup()
  for (const [what, { lineBytes, peakGrowth }] of [
    ["one 20 MiB line (one subscriber)", r.bigLine],
    ["three 12 MiB lines of one turn (ten subscribers)", threeLines]
  ] as const) {
    report({
      name: `server peak memory growth for ${what}`,
      value: `${(peakGrowth / 2 ** 20).toFixed(0)} MiB (${(peakGrowth / lineBytes).toFixed(1)}× the lines)`,
      goal: `≤ ${BIG_LINE_BOUND}× the lines (EVENTS.md, Limits)`,
      ratio: (BIG_LINE_BOUND * lineBytes) / peakGrowth,
      atLeast: 1
    })
  }
}

if (all || which.has("resume")) {
  const { benchResume } = await import("./resume.ts")
  for (const count of snapshotSizes) {
    const resume = await benchResume(count)
    const what = `resume of a ${resume.events}-event thread`
    if (count === 100_000) {
      reportAtMost(`${what}, last 1,000 events missed`, resume.backlog1000.wallMs, 10, "ms", 2)
      note(`CPU time of that resume (server and client): ${ms(resume.backlog1000.cpuMs)}`)
    }
    reportAtMost(`${what}, no cursor (snapshot window)`, resume.snapshot.wallMs, 20, "ms", 2)
    note(
      `CPU time of that resume (server and client): ${ms(resume.snapshot.cpuMs)}, ` +
        `${(resume.snapshot.bytes / 1024).toFixed(0)} KB received`
    )
    note(`resume with a cursor too old (snapshot + tail): ${ms(resume.tooOldCursor.wallMs)}`)
    note(
      `the whole history (snapshot, then every page back): ${ms(resume.wholeHistory.wallMs)}, ` +
        `${(resume.wholeHistory.bytes / 1024).toFixed(0)} KB received`
    )
  }
}

if (all || which.has("snapshot")) {
  const { benchSnapshot } = await import("./snapshot.ts")
  for (const count of snapshotSizes) {
    const s = await benchSnapshot(count)
    note(
      `snapshot window of a ${count}-event thread: ${ms(s.ms)} for ${(s.bytes / 1024).toFixed(0)} KB; ` +
        `its whole history in ${s.pages} pages: ${ms(s.wholeMs)} for ${(s.wholeBytes / 1024).toFixed(0)} KB`
    )
  }
}

if (all || which.has("startup")) {
  const { benchStartup } = await import("./startup.ts")
  const s = await benchStartup()
  reportAtMost("planbridge --help", s.help.wallMs, 150, "ms", 0)
  reportAtMost("planbridge token", s.token.wallMs, 150, "ms", 0)
  note(
    `CPU time: --help ${s.help.cpuMs} ms, token ${s.token.cpuMs} ms; bare \`node -e 0\` ${s.bareNode.wallMs.toFixed(0)} ms ` +
      `wall, ${s.bareNode.cpuMs} ms CPU (a loaded machine inflates wall times, not CPU times)`
  )
  reportAtMost("planbridge serve until it answers HTTP", s.serveMs, 400, "ms", 0)
  note(`CPU time of serve until it answers: ${s.serveCpuMs} ms`)
  reportAtMost("idle server RSS, no session", s.idleRssMb, 100, "MB", 0)
}

if (all || which.has("codex")) {
  const { benchCodexTurn } = await import("./codexTurn.ts")
  const r = await benchCodexTurn(21)
  const ours = median(r.planbridge.wallMs)
  const bare = median(r.bare.wallMs)
  const floor = median(r.floor.wallMs)
  const turns = (xs: ReadonlyArray<number>) => xs.map((x) => x.toFixed(0)).join(", ")
  note(
    `codex plan turns (ms), planbridge: ${turns(r.planbridge.wallMs)}; bare JSON-RPC: ${turns(r.bare.wallMs)}; ` +
      `committing relay: ${turns(r.floor.wallMs)}`
  )
  note(
    `CPU time per turn (median): this process, planbridge ${ms(median(r.planbridge.cpuMs))}, ` +
      `bare JSON-RPC ${ms(median(r.bare.cpuMs))}, committing relay ${ms(median(r.floor.cpuMs))} ` +
      `(the scripted model runs in all three); the app-server, planbridge's ${ms(median(r.planbridge.providerCpuMs))}, ` +
      `the bare client's ${ms(median(r.bare.providerCpuMs))}, the relay's ${ms(median(r.floor.providerCpuMs))}; ` +
      `${availableParallelism()} cores`
  )
  note(
    `the floor of a service that commits before it publishes (the bare client, every notification committed to ` +
      `SQLite, then relayed as is over a loopback WebSocket): ${ms(floor)}, ratio to the limit ${(bare / floor).toFixed(3)}; ` +
      `planbridge to that floor ${(floor / ours).toFixed(3)}`
  )
  report({
    name: `scripted plan turn on the real codex app-server (median of ${r.planbridge.wallMs.length})`,
    value: ms(ours),
    limit: `bare JSON-RPC client on the same binary and model ${ms(bare)}`,
    goal: "≤ 5% more than the limit",
    ratio: bare / ours,
    atLeast: 1 / 1.05
  })
}

if (all || which.has("postgres")) {
  const { benchPostgres, benchPostgresCommit, benchPostgresIngest } = await import("./postgres.ts")
  const { benchLatency } = await import("./ws.ts")
  const postgres = await benchPostgres()
  try {
    await benchPostgresIngest(postgres, { count: 10_000, batch: 500, run: 0 })
    const runs = []
    for (let i = 1; i <= 3; i++) {
      const r = await benchPostgresIngest(postgres, { count: 20_000, batch: 500, run: i })
      runs.push(r)
      note(
        `postgres ingest run ${i}: planbridge ${Math.round(r.ourRate)} ev/s, bare PostgreSQL ${Math.round(r.bareRate)} ev/s, ` +
          `ratio ${r.ratio.toFixed(3)}`
      )
    }
    report({
      name: `postgres ingest (${runs[0]!.events} events in batches of ${runs[0]!.batch}, median of ${runs.length} runs)`,
      value: `${Math.round(median(runs.map((x) => x.ourRate)))} ev/s`,
      limit: `bare batched insert into the same PostgreSQL ${Math.round(median(runs.map((x) => x.bareRate)))} ev/s`,
      goal: "≥ 0.5× the limit",
      ratio: median(runs.map((x) => x.ratio)),
      atLeast: 0.5
    })
    const commit = await benchPostgresCommit(postgres)
    note(`bare one-row INSERT committed on its own (fsync on): p50 ${ms(commit.p50)}, p99 ${ms(commit.p99)}`)
    const options = { sessions: 50, clients: 200, intervalMs: 20, events: 40 }
    for (const viaReplica of [false, true]) {
      const store = await postgres.createDatabase(viaReplica ? "bench_latency_replica" : "bench_latency")
      const r = await benchLatency({ ...options, store, viaReplica })
      const what = viaReplica ? "ingested on one replica, clients on another (NOTIFY, rows read back)" : "one server"
      report({
        name: `postgres event → client p50 (${what}; ${options.sessions} sessions, ${options.clients} clients)`,
        value: ms(r.planbridge.p50),
        limit: `bare ws broadcast ${ms(r.bare.p50)}; bare committed insert ${ms(commit.p50)}`,
        goal: "within 3× of the bare broadcast plus the bare insert",
        ratio: (r.bare.p50 + commit.p50) / r.planbridge.p50,
        atLeast: 1 / 3
      })
      report({
        name: `postgres event → client p99 (${what})`,
        value: ms(r.planbridge.p99),
        limit: `bare ws broadcast ${ms(r.bare.p99)}; bare committed insert ${ms(commit.p99)}`,
        goal: "within 2× of the bare broadcast plus the bare insert",
        ratio: (r.bare.p99 + commit.p99) / r.planbridge.p99,
        atLeast: 0.5
      })
      note(`delivered ${r.delivered}/${r.expected}`)
    }
  } finally {
    postgres.stop()
  }
}

if (all || which.has("scale")) {
  const { benchPostgres } = await import("./postgres.ts")
  const { benchScale, LINK_DELAY_MS } = await import("./scale.ts")
  const postgres = await benchPostgres()
  try {
    const sessions = 50
    const { link, runs } = await benchScale(postgres, { replicas: [1, 2, 4], sessions, events: 60 })
    note(
      `simulated link: a userspace TCP proxy adding ${LINK_DELAY_MS} ms each way between every replica and ` +
        `PostgreSQL (no netem in this kernel); select 1 over it p50 ${ms(link.roundTrip.p50)}, ` +
        `a bare one-row INSERT committed over it p50 ${ms(link.commit.p50)}, p99 ${ms(link.commit.p99)}`
    )
    for (const r of runs)
      note(
        `${r.replicas} replica(s) × ${sessions} sessions: ${Math.round(r.rate)} ev/s (${r.events} events, ` +
          `${r.stored} stored), ${Math.round(r.appendRate)} appends/s (${r.appends} transactions, ` +
          `${(r.stored / r.appends).toFixed(1)} events each); bare inserts over the same link by ${r.replicas} ` +
          `client(s) ${Math.round(r.bare.rate)} ev/s; event → client p50 ${ms(r.p50)}, p99 ${ms(r.p99)}` +
          `${r.delivered ? "" : " (NOT every delivery arrived)"}; replicas' CPU ${r.cpuSeconds.toFixed(1)} s in ` +
          `${r.seconds.toFixed(1)} s; load average ${r.load.before.toFixed(2)} → ${r.load.after.toFixed(2)} ` +
          `(${availableParallelism()} cores)`
      )
    const one = runs.find((r) => r.replicas === 1)!
    for (const r of runs) {
      report({
        name: `scale: postgres ingest over the link, ${r.replicas} replica(s) × ${sessions} sessions`,
        value: `${Math.round(r.rate)} ev/s`,
        limit: `bare batched inserts over the same link ${Math.round(r.bare.rate)} ev/s`,
        goal: "≥ 0.5× the limit",
        ratio: r.rate / r.bare.rate,
        atLeast: 0.5
      })
      report({
        name: `scale: event → client p50, ${r.replicas} replica(s)`,
        value: ms(r.p50),
        limit: `bare committed insert over the link ${ms(link.commit.p50)}`,
        goal: "within 3× of the limit",
        ratio: link.commit.p50 / r.p50,
        atLeast: 1 / 3
      })
      if (r.replicas > 1) {
        // The bare clients share the same cores: their own growth is the most this machine allows.
        const ours = r.rate / one.rate
        const bare = r.bare.rate / one.bare.rate
        report({
          name: `scale: cluster append rate at ${r.replicas} replicas against 1`,
          value: `${Math.round(r.rate)} ev/s against ${Math.round(one.rate)} ev/s (${ours.toFixed(2)}×)`,
          limit:
            `bare inserts over the same link by ${r.replicas} clients against 1: ${Math.round(r.bare.rate)} ` +
            `against ${Math.round(one.bare.rate)} ev/s (${bare.toFixed(2)}×, this machine's own growth)`,
          goal: `≥ ${r.replicas === 2 ? "1.7" : "3"}× the rate at 1`,
          ratio: ours,
          atLeast: r.replicas === 2 ? 1.7 : 3
        })
        note(
          `growth at ${r.replicas} replicas: ours ${ours.toFixed(2)}× against the bare side's ${bare.toFixed(2)}× ` +
            `(ours / bare ${(ours / bare).toFixed(3)})`
        )
      }
    }
  } finally {
    postgres.stop()
  }
}

summary()
