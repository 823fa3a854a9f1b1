import * as CliError from "effect/cli/CliError"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { Console as NodeConsole } from "node:console"
import { Writable } from "node:stream"
import { cliEnvironment } from "./cliEnvironment.ts"
import { Io, processIo, type CliIo } from "./CliIo.ts"
import { runPlanbridge } from "./commands.ts"
import { CliExit, ExitCode } from "./exitCodes.ts"

/** The exit code a finished run stands for (PROTOCOL.md#cli). */
const exitCodeOf = (exit: Exit.Exit<void, unknown>, io: CliIo): number => {
  if (Exit.isSuccess(exit)) return ExitCode.ok
  const failure = Cause.findErrorOption(exit.cause)
  if (failure._tag === "None") {
    // A defect: a bug or an environment the command did not expect (a file it cannot write).
    io.err(`planbridge: ${Cause.pretty(exit.cause)}\n`)
    return ExitCode.failed
  }
  const error = failure.value
  if (error instanceof CliExit) return error.code
  // The library's own errors were shown by the presenter already. Help it showed because a
  // parent command was called without a sub-command is a usage error, except for a bare
  // `planbridge`, which asks for the overview.
  const overview = CliError.isCliError(error) && error._tag === "ShowHelp" && error.errors.length === 0
  return overview && error.commandPath.length <= 1 ? ExitCode.ok : ExitCode.usage
}

/** A console writing to `io`: the library prints shell completion scripts with `Console.log`. */
const consoleFor = (io: CliIo): Console.Console => {
  const sink = (write: (text: string) => void) =>
    new Writable({
      write: (chunk: Buffer | string, _encoding, done) => {
        write(String(chunk))
        done()
      }
    })
  return new NodeConsole({ stdout: sink(io.out), stderr: sink(io.err) })
}

/**
 * `planbridge …`: runs one command from the table in `commands.ts` and returns its exit code.
 * `io` replaces the process's streams (for callers that capture the output).
 */
export const main = async (argv: ReadonlyArray<string>, io: CliIo = processIo): Promise<number> => {
  const program = runPlanbridge(argv).pipe(
    Effect.provide(cliEnvironment),
    Effect.provideService(Io, io),
    Effect.provideService(Console.Console, consoleFor(io))
  )
  return exitCodeOf(await Effect.runPromiseExit(program), io)
}
