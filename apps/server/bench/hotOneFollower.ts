import { loadavg } from "node:os"
import { cleanup } from "../test/chaos/rig.ts"
import { runHotThread } from "../test/support/hotThread.ts"
import { ingestCpuPerEvent } from "./groupCommitCost.ts"

/**
 * The hot part's server CPU per event with ONE follower (and the control client): the server's
 * own cost per line with the least fan-out, less noisy than 200 clients for A/B pairs of
 * ingestion changes (PROFILE.md, "One hot thread", "Tenth round"); and the in-process ingestion
 * CPU per event at one event a transaction (`ingestCpuPerEvent(1)`). CPU time, not wall time:
 * what a shared, loaded machine distorts least. The server runs from `dist/` (run `npm run build`
 * first: a stale build measures old code) unless PLANBRIDGE_FROM_SOURCE=1.
 *
 * `node ./bin/run-ts.mjs ./bench/hotOneFollower.ts [hot|ingest|both]`, inside
 * scripts/in-loopback-netns.sh. HOT_SERVER_NODE_OPTIONS goes to the server's NODE_OPTIONS (e.g.
 * `--require <profiler.cjs>`; `--cpu-prof` is not allowed there).
 */
const which = process.argv[2] ?? "both"
try {
  if (which !== "ingest") {
    const serverNodeOptions = process.env.HOT_SERVER_NODE_OPTIONS
    const f = await runHotThread({
      clients: 1,
      count: 5_000,
      rate: 1_000,
      warmUp: 1_000,
      env: serverNodeOptions === undefined ? {} : { NODE_OPTIONS: serverNodeOptions }
    })
    const main = f.serverMainThreadCpuMs ?? Number.NaN
    console.log(
      `hot, one follower: server CPU ${(f.serverCpuMs / f.events).toFixed(3)} ms/event, main thread ` +
        `${(main / f.events).toFixed(3)} (${f.serverCpuMs} ms, main ${main} ms, ${f.events} events, ` +
        `${f.deliveries}/${f.expected} delivered, ${f.outOfOrder} out of order; load ${loadavg()[0]!.toFixed(1)})`
    )
  }
  if (which !== "hot") {
    const ms = await ingestCpuPerEvent(1)
    console.log(`ingest, one event a transaction: ${ms.toFixed(3)} ms/event (load ${loadavg()[0]!.toFixed(1)})`)
  }
} finally {
  cleanup()
}
