import { parseArgs } from "node:util"
import { describePgRestarts, pgRestartsFailed, runPgRestarts } from "../test/chaos/pgRestart.ts"
import { cleanup } from "../test/chaos/rig.ts"
import { assertLoopbackOnly } from "../test/support/loopbackOnly.ts"
import { startPostgres } from "../test/support/postgres.ts"

/**
 * PostgreSQL restarts under streaming load at scale (issue 31, items 2 and 3; the suite's
 * test/chaos/pgRestart.test.ts runs 3): a cluster of its own, `planbridge serve` on it, and
 * `--restarts` `pg_ctl restart -m MODE` while a Cursor agent floods a turn each time. Prints the
 * figures; exit code 1 if the server exited once or a chunk is missing. Run it in the loopback
 * namespace:
 *   bash scripts/in-loopback-netns.sh node apps/server/bin/run-ts.mjs apps/server/scripts/chaos-pg-restarts.ts
 */
const { values } = parseArgs({
  options: {
    restarts: { type: "string", default: "24" },
    mode: { type: "string", default: "immediate" },
    chunks: { type: "string", default: "20000" },
    seed: { type: "string", default: "31" }
  }
})
const whole = (name: string, value: string | undefined): number => {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1) {
    console.error(`--${name} must be a whole number from 1, not ${value}`)
    process.exit(2)
  }
  return n
}
const mode = values.mode
if (mode !== "immediate" && mode !== "fast") {
  console.error(`--mode must be immediate or fast, not ${mode}`)
  process.exit(2)
}
// The server runs from the sources as they are (no build needed), as the tests run it.
process.env.PLANBRIDGE_FROM_SOURCE ??= "1"
assertLoopbackOnly()

const postgres = await startPostgres()
try {
  const figures = await runPgRestarts({
    postgres,
    database: "chaos_pg_restarts",
    restarts: whole("restarts", values.restarts),
    mode,
    chunks: whole("chunks", values.chunks),
    seed: whole("seed", values.seed),
    onRestart: (done, f) =>
      console.log(`  restart ${done}: serve exits ${f.serverExits}, turns incomplete ${f.turnsIncomplete}`)
  })
  console.log(describePgRestarts(figures, mode))
  for (const failure of figures.failures) console.log(`  ${failure}`)
  process.exitCode = pgRestartsFailed(figures) ? 1 : 0
} finally {
  postgres.stop()
  cleanup()
}
