import type * as Command from "effect/cli/Command"
import { describe, expect, it } from "vitest"
import { planbridge } from "../../src/cli/commands.ts"
import { runCli } from "./support/runCli.ts"

/** Every command path of the table, depth first: "" is `planbridge` itself. */
const pathsOf = (command: Command.Command.Any, prefix: ReadonlyArray<string> = []): ReadonlyArray<string> => [
  prefix.join(" "),
  ...command.subcommands.flatMap((group) => group.commands.flatMap((child) => pathsOf(child, [...prefix, child.name])))
]

const COMMANDS = [
  "",
  "serve",
  "acp",
  "providers",
  "open",
  "token",
  "prompts",
  "prompts list",
  "prompts show",
  "prompts answer",
  "prompts cancel",
  "prompts approvals",
  "prompts respond",
  "prompts decide",
  "prompts audit",
  "notifications",
  "notifications status",
  "threads",
  "threads import",
  "replay",
  "record",
  "rebuild",
  "schema",
  "help"
]

const words = (path: string): ReadonlyArray<string> => (path === "" ? [] : path.split(" "))

describe("planbridge --help", () => {
  it("the table has exactly the documented commands (a new one must be added here, and gets these tests)", () => {
    expect(pathsOf(planbridge)).toEqual(COMMANDS)
  })

  for (const path of COMMANDS) {
    it(`'planbridge ${path} --help', '-h', 'help ${path}': usage, options, examples, exit codes`, async () => {
      const long = await runCli(...words(path), "--help")
      expect(long.code).toBe(0)
      expect(long.stderr).toBe("")
      expect(long.stdout).toContain(`USAGE\n  planbridge${path === "" ? "" : ` ${path}`}`)
      expect(long.stdout).toContain("\nEXAMPLES\n  ")
      expect(long.stdout).toMatch(/\nEXIT CODES\n {2}0 {2}\S/)
      expect(long.stdout).toContain("--help, -h")
      expect(long.stdout.endsWith("\n")).toBe(true)
      expect(await runCli(...words(path), "-h")).toEqual(long)
      expect(await runCli("help", ...words(path))).toEqual(long)
    })
  }

  it("shows each option's default", async () => {
    const serve = (await runCli("serve", "--help")).stdout
    for (const shown of ["127.0.0.1", "4317", "info", "./.planbridge/"]) expect(serve).toContain(`(default: ${shown})`)
    expect(serve).toContain("--allow-origin")
    expect(serve).toContain("(choices: silent, error, warn, info, debug)")
    const answer = (await runCli("prompts", "answer", "--help")).stdout
    for (const flag of ["--option", "--text", "--skip", "--client-request-id", "--url", "--data-dir", "--json"]) {
      expect(answer).toContain(flag)
    }
    expect(answer).toContain("(default: the address the server on --data-dir recorded in <data dir>/server.json)")
    expect(answer).toContain("<PROMPT_ID>")
    expect((await runCli("rebuild", "--help")).stdout).toMatch(/\n {2}3 {2}they differed/)
  })

  it("a bare 'planbridge' prints the overview, ending with a newline; every command is listed", async () => {
    const bare = await runCli()
    expect(bare).toEqual(await runCli("--help"))
    expect(bare.code).toBe(0)
    expect(bare.stdout.endsWith("\n")).toBe(true)
    for (const name of ["serve", "token", "prompts", "replay", "rebuild", "schema", "help"]) {
      expect(bare.stdout).toMatch(new RegExp(`\\n {2}${name} `))
    }
  })

  it("a parent called without its sub-command prints its help on stderr, exit 2", async () => {
    const run = await runCli("prompts")
    expect(run).toMatchObject({ code: 2, stdout: "" })
    expect(run.stderr).toContain("SUBCOMMANDS")
  })

  it("'planbridge help' with an unknown command names the closest one on stderr, exit 2", async () => {
    expect(await runCli("help", "prompts", "lst")).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "planbridge prompts: unknown command 'lst'; did you mean 'list'?\n" +
        "usage: planbridge prompts <subcommand> [flags]\n" +
        "Run 'planbridge prompts --help' for its options, defaults and examples.\n"
    })
    const sevre = await runCli("help", "sevre")
    expect(sevre).toMatchObject({ code: 2, stdout: "", stderr: expect.stringContaining("did you mean 'serve'?") })
    expect(await runCli("help", "schema", "extra")).toEqual({
      code: 2,
      stdout: "",
      stderr: "planbridge help: 'schema' has no sub-command 'extra'\n"
    })
  })

  it("an unknown command is a usage error (exit 2, nothing on stdout) with or without --help", async () => {
    for (const argv of [["bogus"], ["bogus", "--help"], ["bogus", "-h"], ["sevre", "--port", "1", "--help"]]) {
      const run = await runCli(...argv)
      expect(run, argv.join(" ")).toMatchObject({ code: 2, stdout: "" })
      expect(run.stderr, argv.join(" ")).toContain(`unknown command '${argv[0]}'`)
    }
    const nested = await runCli("prompts", "lst", "--help")
    expect(nested).toMatchObject({ code: 2, stdout: "", stderr: expect.stringContaining("did you mean 'list'?") })
    // A known command's --help is still its help.
    expect(await runCli("prompts", "list", "--help")).toMatchObject({ code: 0, stderr: "" })
  })

  it("prints a shell completion script for the whole table", async () => {
    for (const shell of ["bash", "zsh", "fish"]) {
      const run = await runCli("--completions", shell)
      expect(run.code).toBe(0)
      for (const word of ["serve", "prompts", "answer", "--data-dir"]) expect(run.stdout, shell).toContain(word)
    }
  })
})
