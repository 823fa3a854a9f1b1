import { Effect } from "effect"
import { Database } from "../persistence/Database.ts"
import { makeEventStore } from "../persistence/EventStore.ts"
import { rebuildProjections } from "../persistence/ProjectionRebuild.ts"
import { parseCommandArgs, registerCommand } from "./main.ts"
import { runWithStore } from "./store.ts"

/**
 * `planbridge rebuild [--dry-run]`: drops the projections, replays the event log and reports
 * whether the result equals what was there. Exit 0 when identical, 3 when it differed (and,
 * without --dry-run, was repaired). Run it while the server is stopped.
 */
registerCommand(
  "rebuild",
  async (args) => {
    const { values } = parseCommandArgs(args, { "dry-run": { type: "boolean", default: false } })
    return runWithStore(
      values["data-dir"],
      Effect.gen(function* () {
        const { db } = yield* Database
        const report = rebuildProjections(db, makeEventStore(db), { dryRun: values["dry-run"] === true })
        if (report.differences.length === 0) {
          process.stdout.write(`rebuilt projections from ${report.events} events: identical\n`)
          return 0
        }
        process.stdout.write(`rebuilt projections from ${report.events} events: ${values["dry-run"] ? "would change" : "changed"}\n`)
        for (const d of report.differences) {
          process.stdout.write(`  ${d.table}: ${d.before} rows before, ${d.after} after, ${d.changedRows} differing\n`)
        }
        return 3
      })
    )
  },
  "drop the projections and replay the event log (--dry-run to only compare)"
)
