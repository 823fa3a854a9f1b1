import { DEFAULT_DATA_DIR } from "./defaults.ts"
import { colorsOn } from "./terminalColors.ts"

/**
 * The two invocations scripts run most, answered without loading the CLI library (effect: ~900 KB
 * of JavaScript to compile, most of their start-up): `planbridge token [--data-dir DIR]`, and
 * `planbridge --help` (or `-h`) when the help is printed plain, from the text the build rendered
 * with the library (dist/help.txt, see scripts/build.mjs). Anything else, or any failure, is left
 * to the CLI (`undefined`), which parses, reports and exits as it always does: this path never
 * prints an error of its own, and a command it answers prints exactly what the CLI would.
 * `token`'s module is loaded only for `token`; it compiles effect's `Data` alone (~30 KB), not
 * the whole bundled effect (~820 KB).
 */

export interface FastPathInput {
  readonly argv: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string | undefined>>
  readonly stdoutIsTerminal: boolean
  /** The help as the CLI renders it plain, when the build rendered it. */
  readonly plainHelp: () => string | undefined
  readonly out: (text: string) => void
}

/** The data dir of `token [--data-dir DIR | --data-dir=DIR]`, or undefined for any other argv. */
const tokenDataDir = (argv: ReadonlyArray<string>): string | undefined => {
  if (argv[0] !== "token") return undefined
  if (argv.length === 1) return DEFAULT_DATA_DIR
  if (argv.length === 2 && argv[1]!.startsWith("--data-dir=") && argv[1]!.length > "--data-dir=".length)
    return argv[1]!.slice("--data-dir=".length)
  if (argv.length === 3 && argv[1] === "--data-dir" && argv[2] !== "" && !argv[2]!.startsWith("-")) return argv[2]
  return undefined
}

/** The exit code when this path answered the invocation; undefined: run the CLI. */
export const runFastPath = async (input: FastPathInput): Promise<number | undefined> => {
  const dataDir = tokenDataDir(input.argv)
  if (dataDir !== undefined) {
    const { tokenOf } = await import("./storedToken.ts")
    let found: ReturnType<typeof tokenOf>
    try {
      found = tokenOf(dataDir)
    } catch {
      // The CLI reports it (and exits with its code).
      return undefined
    }
    // No token to print: the CLI says why (on stderr, with its exit code).
    if ("refusal" in found) return undefined
    input.out(`${found.token}\n`)
    return 0
  }
  if (
    input.argv.length === 1 &&
    (input.argv[0] === "--help" || input.argv[0] === "-h") &&
    !colorsOn(input.stdoutIsTerminal, input.env)
  ) {
    const help = input.plainHelp()
    if (help === undefined) return undefined
    input.out(help)
    return 0
  }
  return undefined
}
