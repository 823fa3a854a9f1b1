import { parseArgs } from "node:util"

export const DEFAULT_DATA_DIR = "./.planbridge/"

const HELP = `planbridge — provider-agnostic orchestration backend for coding agents

Usage: planbridge <command> [options]

Commands:
  help                      show this text

Every command that touches state takes --data-dir DIR (default ${DEFAULT_DATA_DIR}).
`

type Command = (args: ReadonlyArray<string>) => Promise<number>

const commands: Record<string, Command> = {}

/** Registers a sub-command; each concern's CLI module adds its own. */
export const registerCommand = (name: string, command: Command, help: string): void => {
  commands[name] = command
  helpLines.push(`  ${name.padEnd(24)}  ${help}`)
}
const helpLines: Array<string> = []

const printHelp = (): void => {
  process.stdout.write(HELP.replace("Commands:\n", `Commands:\n${helpLines.map((l) => l + "\n").join("")}`))
}

export const main = async (argv: ReadonlyArray<string>): Promise<number> => {
  await import("./commands.ts")
  const [name, ...rest] = argv
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    printHelp()
    return 0
  }
  const command = commands[name]
  if (command === undefined) {
    process.stderr.write(`planbridge: unknown command '${name}'. Run 'planbridge --help'.\n`)
    return 2
  }
  try {
    return await command(rest)
  } catch (error) {
    if (isUsageError(error)) {
      process.stderr.write(`planbridge ${name}: ${error.message}\n`)
      return 2
    }
    throw error
  }
}

const isUsageError = (error: unknown): error is Error & { code: string } => {
  const code = error instanceof Error ? (error as Error & { code?: unknown }).code : undefined
  return typeof code === "string" && code.startsWith("ERR_PARSE_ARGS")
}

/** Parses a command's options strictly: an unknown flag is an error, not silently ignored. */
export const parseCommandArgs = <const O extends Record<string, { type: "string" | "boolean"; default?: string | boolean; multiple?: boolean }>>(
  args: ReadonlyArray<string>,
  options: O
) => parseArgs({ args: [...args], options: { ...options, "data-dir": { type: "string", default: DEFAULT_DATA_DIR } }, allowPositionals: true, strict: true })
