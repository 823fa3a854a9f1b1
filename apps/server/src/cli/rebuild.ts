import { Effect } from "effect"
import { ProjectionRebuild } from "../persistence/ProjectionRebuild.ts"
import { Io } from "./CliIo.ts"
import { ExitCode } from "./exitCodes.ts"
import { readServerAddress, type RecordedServer } from "./serverAddress.ts"
import { withStore } from "./store.ts"

/**
 * Whether a rebuild that writes may run on this data dir: not while its server runs (it would
 * serve from and append to projections being dropped under it). A stale address file (the
 * server gone without a clean stop) does not stop it, but is said; one that cannot be read
 * stops it, since it may name a live server.
 */
const liveServerRefusal = (recorded: RecordedServer): { readonly refusal?: string; readonly note?: string } => {
  switch (recorded.kind) {
    case "none":
      return {}
    case "running":
      return {
        refusal:
          `the server on this data dir is running (process ${recorded.address.pid}, ${recorded.address.url}, ` +
          `per ${recorded.file}): stop it first; --dry-run only compares, and may run beside it`
      }
    case "stale":
      return {
        note:
          `${recorded.file} names process ${recorded.address.pid}, which is gone (the server did not stop ` +
          `cleanly): no server is running on this data dir`
      }
    case "unreadable":
      return {
        refusal:
          `${recorded.file} cannot be read (${recorded.why}), so whether a server runs on this data dir is ` +
          `unknown: remove the file if none does`
      }
  }
}

/**
 * `planbridge rebuild [--dry-run]`: drops the projections, replays the event log and reports
 * whether the result equals what was there. Exit 0 when identical, 3 when it differed (and,
 * without --dry-run, was repaired). Without --dry-run it refuses while the data dir's server runs.
 */
export const rebuild = (input: RebuildInput) =>
  Effect.gen(function* () {
    if (!input.dryRun) {
      const io = yield* Io
      const { refusal, note } = liveServerRefusal(readServerAddress(input.dataDir))
      if (refusal !== undefined) {
        io.err(`planbridge rebuild: ${refusal}\n`)
        return ExitCode.failed
      }
      if (note !== undefined) io.err(`planbridge rebuild: note: ${note}\n`)
    }
    return yield* rebuildIn(input)
  })

interface RebuildInput {
  readonly dataDir: string
  readonly store: string | undefined
  readonly dryRun: boolean
}

const rebuildIn = (input: RebuildInput) =>
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
