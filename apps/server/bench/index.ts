import { benchIngest } from "./ingest.ts"

const which = new Set(process.argv.slice(2))
const all = which.size === 0

const median = (xs: ReadonlyArray<number>): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
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
    console.log(
      `  run ${i + 1}: planbridge ${Math.round(r.ourRate)} ev/s, bare SQLite ${Math.round(r.bareRate)} ev/s, ` +
        `ratio ${r.ratio.toFixed(3)}, CPU-time ratio ${r.cpuRatio.toFixed(3)}`
    )
  }
  const r = runs[0]!
  console.log(
    `ingest: ${r.events} events in batches of ${r.batch}, median of ${runs.length} runs: ` +
      `planbridge ${Math.round(median(runs.map((x) => x.ourRate)))} ev/s, bare SQLite ${Math.round(median(runs.map((x) => x.bareRate)))} ev/s, ` +
      `ratio ${median(runs.map((x) => x.ratio)).toFixed(3)} (goal ≥ 0.5), CPU-time ratio ${median(runs.map((x) => x.cpuRatio)).toFixed(3)}`
  )
}

if (all || which.has("ws")) {
  const { benchLatency, benchResume } = await import("./ws.ts")
  const options = { sessions: 50, clients: 200, events: 40, intervalMs: 20 }
  const r = await benchLatency(options)
  const ms = (x: number) => `${x.toFixed(2)} ms`
  console.log(
    `ws latency: ${options.sessions} sessions streaming, ${options.clients} clients, ${r.planbridge.samples} deliveries: ` +
      `planbridge p50 ${ms(r.planbridge.p50)} p99 ${ms(r.planbridge.p99)}; bare ws broadcast p50 ${ms(r.bare.p50)} p99 ${ms(r.bare.p99)}; ` +
      `ratio p50 ${(r.bare.p50 / r.planbridge.p50).toFixed(3)}, p99 ${(r.bare.p99 / r.planbridge.p99).toFixed(3)} (delivered ${r.delivered}/${r.expected})`
  )
  const resume = await benchResume(100_000)
  console.log(
    `resume: thread of ${resume.events} events: last 1,000 missed ${ms(resume.backlog1000Ms)}, ` +
      `no cursor (snapshot) ${ms(resume.snapshotMs)}, cursor too old (snapshot + tail) ${ms(resume.tooOldCursorMs)}`
  )
}
