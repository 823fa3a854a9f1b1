import type * as CliError from "effect/cli/CliError"
import * as CliOutput from "effect/cli/CliOutput"
import type { HelpDoc } from "effect/cli/HelpDoc"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { Io } from "./CliIo.ts"
import { ExitCodes } from "./exitCodes.ts"

/** The library's help layout, plus each command's exit codes, ending with a newline like any text output. */
export const formatHelp = (doc: HelpDoc, colors: boolean): string => {
  // The library puts no blank line between a subcommand list and the examples that follow it.
  const text = CliOutput.defaultFormatter({ colors })
    .formatHelpDoc(doc)
    .replace(/([^\n])\n((?:\x1b\[1m)?EXAMPLES)/, "$1\n\n$2")
  const codes = Context.getOrUndefined(doc.annotations, ExitCodes)
  if (codes === undefined || codes.length === 0) return `${text}\n`
  const title = colors ? "\x1b[1mEXIT CODES\x1b[0m" : "EXIT CODES"
  return `${text}\n\n${title}\n${codes.map(([code, meaning]) => `  ${code}  ${meaning}`).join("\n")}\n`
}

const quoteAll = (names: ReadonlyArray<string>): string => names.map((n) => `'${n}'`).join(", ")

/**
 * One usage error as one line. The library's suggestions (within two edits) name the closest
 * valid option or command; without one, the valid ones are listed, so the line always says what
 * would have worked.
 */
const describeError = (error: CliError.NonShowHelpErrors, doc: HelpDoc): string => {
  switch (error._tag) {
    case "UnrecognizedOption": {
      const unknown = `unknown option '${error.option}'`
      if (error.suggestions.length > 0) return `${unknown}; did you mean ${quoteAll(error.suggestions)}?`
      const flags = [...doc.flags, ...(doc.inheritedFlags ?? []), ...(doc.globalFlags ?? [])].map((f) => `--${f.name}`)
      return `${unknown}; this command takes ${quoteAll(flags)}`
    }
    case "UnknownSubcommand": {
      const unknown = `unknown command '${error.subcommand}'`
      if (error.suggestions.length > 0) return `${unknown}; did you mean ${quoteAll(error.suggestions)}?`
      const names = (doc.subcommands ?? []).flatMap((group) => group.commands.map((c) => c.name))
      return `${unknown}; the commands are ${quoteAll(names)}`
    }
    default:
      return error.message
  }
}

/**
 * How help and usage errors reach the user. Asked-for help (`--help`, `-h`, `planbridge help X`,
 * a bare `planbridge`) is the command's output: stdout, exit 0. Anything caused by a wrong call
 * goes to stderr only, so that stdout stays empty (or valid JSON under `--json`) for scripts.
 */
export const presenter: CliOutput.Presenter = {
  present: (event) =>
    Effect.gen(function* () {
      const io = yield* Io
      switch (event._tag) {
        case "Help": {
          const requested = event.reason === "Requested" || event.commandPath.length <= 1
          if (requested) io.out(formatHelp(event.helpDoc, io.colors()))
          else io.err(formatHelp(event.helpDoc, false))
          return
        }
        case "InvalidInvocation": {
          const path = event.commandPath.join(" ")
          const lines = event.errors.map((error) => `${path}: ${describeError(error, event.helpDoc)}`)
          const hint = `Run '${path} --help' for its options, defaults and examples.`
          io.err(`${lines.join("\n")}\nusage: ${event.helpDoc.usage}\n${hint}\n`)
          return
        }
        case "Version":
          io.out(`${event.name} ${event.version}\n`)
      }
    })
}
