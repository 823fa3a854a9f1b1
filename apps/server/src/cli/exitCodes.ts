import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"

/**
 * The exit codes of `planbridge`, the same for every command (PROTOCOL.md#cli): scripts branch
 * on them, so a command never invents its own meaning for a number listed here.
 */
export const ExitCode = {
  ok: 0,
  /** The command ran and failed: the server refused, no server, an unreadable file, a store error. */
  failed: 1,
  /** The command was called wrongly (unknown command or option, bad value, missing argument). */
  usage: 2,
  /** `rebuild`: the projections differed from the replayed log (and were repaired, without --dry-run). */
  changed: 3
} as const

/** The `[code, meaning]` of a usage error, which every command documents in its `--help`. */
export const USAGE_ERROR = [
  ExitCode.usage,
  "usage error: unknown command or option, bad value, missing argument"
] as const

/** A command's non-zero outcome; `main` turns it into the process's exit code. */
export class CliExit extends Data.TaggedError("CliExit")<{ readonly code: number }> {}

/** Ends a command with `code`: success for 0, a `CliExit` otherwise. */
export const exitWith = (code: number): Effect.Effect<void, CliExit> =>
  code === ExitCode.ok ? Effect.void : Effect.fail(new CliExit({ code }))

/** The exit codes a command documents in its `--help`, as `[code, meaning]`. */
export class ExitCodes extends Context.Service<ExitCodes, ReadonlyArray<readonly [number, string]>>()(
  "planbridge/cli/ExitCodes"
) {}
