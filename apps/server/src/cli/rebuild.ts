import { Effect } from "effect"
import { ProjectionRebuild } from "../persistence/ProjectionRebuild.ts"
import { Io } from "./CliIo.ts"
import { ExitCode } from "./exitCodes.ts"
import { withStore } from "./store.ts"

/**
 * `planbridge rebuild [--dry-run]`: drops the projections, replays the event log and reports
 * whether the result equals what was there. Exit 0 when identical, 3 when it differed (and,
 * without --dry-run, was repaired). Run it while the server is stopped.
 */
export const rebuild = (input: {
  readonly dataDir: string
  readonly store: string | undefined
  readonly dryRun: boolean
}) =>
  withStore(
    input,
    Effect.gen(function* () {
      const io = yield* Io
      const report = yield* (yield* ProjectionRebuild).rebuild({ dryRun: input.dryRun })
      if (report.differences.length === 0) {
        io.out(`rebuilt projections from ${report.events} events: identical\n`)
        return ExitCode.ok
      }
      io.out(`rebuilt projections from ${report.events} events: ${input.dryRun ? "would change" : "changed"}\n`)
      for (const d of report.differences) {
        io.out(`  ${d.table}: ${d.before} rows before, ${d.after} after, ${d.changedRows} differing\n`)
      }
      return ExitCode.changed
    })
  )
