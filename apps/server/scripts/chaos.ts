import { parseArgs } from "node:util"
import { FLOOD_REPORT_ENV } from "../test/provider/acp/flood.ts"
import { badFramesCheck, fdProbeCheck, hugeEventCheck, hugeLineCheck, type CheckResult } from "../test/chaos/edges.ts"
import { describeFlood, floodReportFile, runFlood } from "../test/chaos/flood.ts"
import { cleanup, cursorServeEnv, rssOf, startServe, stopServe, tempDir, type ServeProcess } from "../test/chaos/rig.ts"
import { describeSigkill, runSigkillCycles, sigkillFailed, type SigkillFigures } from "../test/chaos/sigkill.ts"
import { assertLoopbackOnly } from "../test/support/loopbackOnly.ts"

/**
 * `npm run chaos`: the hardening checks of issue 13 at scale, against `planbridge serve` child
 * processes, inside the loopback-only namespace (all traffic is on loopback):
 *  1. SIGKILL cycles with a streaming session (lost, duplicated, gaps, orphans, server_restarted);
 *  2. an agent flood of small chunks (completes, steady ingest rate, bounded memory, whole text);
 *  3. a huge line (over the 32 MiB line bound) and a huge event (a 24 MiB chunk);
 *  4. malformed WebSocket frames, each answered with a typed error;
 *  5. the descriptor-leak probe (refused upgrades under a low `ulimit -n`).
 * Each check is bounded in count and time, prints its figures, and any failure makes the exit
 * code 1. `--quick` runs every check with small counts (a minute or so).
 */
const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    cycles: { type: "string" },
    lanes: { type: "string" },
    flood: { type: "string" },
    frames: { type: "string" },
    refusals: { type: "string" },
    seed: { type: "string", default: "13" },
    only: { type: "string" }
  }
})
const quick = values.quick === true
const count = (value: string | undefined, full: number, small: number, name: string): number => {
  const n = value === undefined ? (quick ? small : full) : Number(value)
  if (!Number.isInteger(n) || n < 0) {
    console.error(`--${name} must be a whole number, not ${value}`)
    process.exit(2)
  }
  return n
}
// About 1.6 s a cycle here (2 CPUs, two lanes side by side): a cycle is mostly the restart of
// `planbridge serve` (1.3-2.5 s of loading its modules under tsx, CPU-bound, so more lanes do not
// help on two CPUs). 700 cycles fit the ~20 minutes of a full run; 1,000 took 26.4 minutes.
const cycles = count(values.cycles, 700, 4, "cycles")
const lanes = Math.max(1, count(values.lanes, 2, 1, "lanes"))
const floodChunks = count(values.flood, 200_000, 5_000, "flood")
const frames = count(values.frames, 10_000, 500, "frames")
const refusals = count(values.refusals, 3_000, 100, "refusals")
const seed = count(values.seed, 13, 13, "seed")
const only = values.only?.split(",")
const FD_LIMIT = 256
/** A flood must not cost the server more than this much memory at its peak. */
const FLOOD_RSS_BOUND = 512 * 1024 * 1024
/** "Steady": the last tenth of the deltas is ingested at least at half the rate of the first. */
const STEADY_RATIO = 0.5

assertLoopbackOnly()

const results: Array<CheckResult> = []
/** Runs a check within `ms`; an exception or the deadline is its failure. */
const check = async (name: string, ms: number, run: () => Promise<CheckResult>) => {
  if (only !== undefined && !only.includes(name)) return
  const started = performance.now()
  console.error(`chaos: ${name}…`)
  let result: CheckResult
  try {
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`did not finish within ${ms / 1000} s`)), ms)
    })
    result = await Promise.race([run(), deadline]).finally(() => clearTimeout(timer))
  } catch (error) {
    result = { name, figures: "(no figures)", failures: [error instanceof Error ? error.message : String(error)] }
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  console.log(`${result.failures.length === 0 ? "ok  " : "FAIL"} ${result.figures} [${seconds} s]`)
  for (const failure of result.failures.slice(0, 10)) console.log(`       ${failure}`)
  results.push(result)
}

const merge = (all: ReadonlyArray<SigkillFigures>): SigkillFigures => {
  const sum = (f: (x: SigkillFigures) => number) => all.reduce((n, x) => n + f(x), 0)
  const cyclesDone = sum((x) => x.cycles)
  const weighted = (f: (x: SigkillFigures) => number) =>
    cyclesDone === 0 ? 0 : sum((x) => f(x) * x.cycles) / cyclesDone
  return {
    cycles: cyclesDone,
    lost: sum((x) => x.lost),
    duplicated: sum((x) => x.duplicated),
    gaps: sum((x) => x.gaps),
    orphans: sum((x) => x.orphans),
    promptsOpenAtKill: sum((x) => x.promptsOpenAtKill),
    promptsClosedRestarted: sum((x) => x.promptsClosedRestarted),
    unclosedTurns: sum((x) => x.unclosedTurns),
    liveAfterRestart: sum((x) => x.liveAfterRestart),
    eventsSeen: sum((x) => x.eventsSeen),
    // Lanes run side by side: the wall time per cycle is the lane's divided by the lanes.
    msPerCycle: weighted((x) => x.msPerCycle) / all.length,
    phases: {
      restart: weighted((x) => x.phases.restart),
      verify: weighted((x) => x.phases.verify),
      session: weighted((x) => x.phases.session),
      stream: weighted((x) => x.phases.stream)
    },
    failures: all.flatMap((x) => x.failures)
  }
}

try {
  // Twice the expected time, plus start-up, bounds the cycles.
  await check("sigkill", 60_000 + (cycles * 6_000) / lanes, async () => {
    const perLane = Array.from({ length: lanes }, (_, i) => Math.floor(cycles / lanes) + (i < cycles % lanes ? 1 : 0))
    let done = 0
    const all = await Promise.all(
      perLane.map((n, lane) =>
        runSigkillCycles({
          cycles: n,
          seed: seed + lane,
          onCycle: () => {
            done += 1
            if (done % 25 === 0) console.error(`chaos: sigkill ${done}/${cycles}`)
          }
        })
      )
    )
    const figures = merge(all)
    const failures = [...figures.failures]
    if (sigkillFailed(figures) && failures.length === 0) failures.push("lost, duplicated, gaps, orphans or open work")
    if (figures.promptsClosedRestarted !== figures.promptsOpenAtKill) {
      failures.push("not every open prompt was closed server_restarted")
    }
    return { name: "sigkill", figures: `${describeSigkill(figures)}; ${lanes} lanes`, failures }
  })

  await check("flood", 120_000 + floodChunks * 5, async () => {
    const reportFile = floodReportFile()
    const env = await cursorServeEnv({ [FLOOD_REPORT_ENV]: reportFile })
    const server = await startServe({ dataDir: tempDir("planbridge-chaos-flood-"), env })
    try {
      const rss = () => rssOf(server.pid)
      const f = await runFlood({ url: server.url, token: server.token, count: floodChunks, reportFile, rss })
      const failures: Array<string> = []
      if (!f.completed) failures.push("the turn did not complete")
      if (!f.textWhole) failures.push("the stored text is not what the agent sent")
      if (!f.streamWhole) failures.push("the streamed text is not what the agent sent")
      if (f.lastRate < f.firstRate * STEADY_RATIO) {
        failures.push(`ingest slowed from ${f.firstRate.toFixed(0)} to ${f.lastRate.toFixed(0)} events/s`)
      }
      const growth = f.rssPeakGrowth ?? 0
      if (growth > FLOOD_RSS_BOUND) failures.push(`server memory grew by ${(growth / 2 ** 20).toFixed(0)} MB`)
      return { name: "flood", figures: describeFlood(f), failures }
    } finally {
      await stopServe(server)
    }
  })

  const edgeServer = async <A>(run: (server: ServeProcess) => Promise<A>, fdLimit?: number) => {
    const server = await startServe({
      dataDir: tempDir("planbridge-chaos-edge-"),
      env: await cursorServeEnv(),
      ...(fdLimit === undefined ? {} : { fdLimit })
    })
    try {
      return await run(server)
    } finally {
      await stopServe(server)
    }
  }
  await check("huge-line", 60_000, () => edgeServer(hugeLineCheck))
  await check("huge-event", 120_000, () => edgeServer((server) => hugeEventCheck(server)))
  await check("frames", 120_000, () => edgeServer((server) => badFramesCheck(server, frames)))
  await check("fds", 120_000, () => edgeServer((server) => fdProbeCheck(server, FD_LIMIT, refusals), FD_LIMIT))
} finally {
  cleanup()
}

const failed = results.filter((r) => r.failures.length > 0)
console.log(
  failed.length === 0
    ? `chaos: all ${results.length} checks passed`
    : `chaos: ${failed.length} of ${results.length} checks FAILED: ${failed.map((r) => r.name).join(", ")}`
)
process.exit(failed.length === 0 ? 0 : 1)
