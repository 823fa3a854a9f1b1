// The CLI's start-up path imports effect by module, not through the `effect` barrel: the barrel
// loads every module of the library, which `planbridge token` and `--help` would pay for.
import * as Context from "effect/Context"
import { colorsOn } from "./terminalColors.ts"

/** Where a command writes, and what it knows about the terminal it writes to. */
export interface CliIo {
  readonly out: (text: string) => void
  readonly err: (text: string) => void
  /** The terminal's width when stdout is a terminal; undefined for a pipe or a file (nothing to fit). */
  readonly columns: () => number | undefined
  /** Colours only on a terminal, and never when NO_COLOR is set (https://no-color.org). */
  readonly colors: () => boolean
}

/**
 * The process's own streams. Each call looks `process.stdout.write` up again (rather than
 * binding it once) so that in-process callers that capture the streams see every line.
 */
export const processIo: CliIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  columns: () => (process.stdout.isTTY ? process.stdout.columns : undefined),
  colors: () => colorsOn(process.stdout.isTTY === true, process.env)
}

/** The streams of the running command; `main(argv, io)` replaces them. */
export const Io: Context.Reference<CliIo> = Context.Reference<CliIo>("planbridge/cli/Io", {
  defaultValue: () => processIo
})
