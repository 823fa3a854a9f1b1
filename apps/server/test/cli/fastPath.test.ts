import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { runFastPath, type FastPathInput } from "../../src/cli/fastPath.ts"
import { writeServerAddress } from "../../src/cli/serverAddress.ts"
import { loadOrCreateToken, tokenFileIn } from "../../src/http/Security.ts"
import { runCli } from "./support/runCli.ts"

/**
 * The fast path answers only `token [--data-dir DIR]` and a plain `--help`, exactly as the CLI
 * would; everything else is the CLI's (builtCli.test.ts runs both through bin/planbridge.mjs).
 */
const scratch = mkdtempSync(join(tmpdir(), "planbridge-fast-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const HELP = "DESCRIPTION\n  the rendered help\n"
const run = async (argv: ReadonlyArray<string>, over: Partial<FastPathInput> = {}) => {
  let printed = ""
  const code = await runFastPath({
    argv,
    env: {},
    stdoutIsTerminal: false,
    plainHelp: () => HELP,
    out: (text) => {
      printed += text
    },
    ...over
  })
  return { code, printed }
}

describe("the CLI's fast path", () => {
  it("token, with --data-dir DIR or --data-dir=DIR: the token stored in that dir", async () => {
    const dir = join(scratch, "data")
    loadOrCreateToken(dir)
    const first = await run(["token", "--data-dir", dir])
    expect(first.code).toBe(0)
    expect(first.printed).toBe(readFileSync(tokenFileIn(dir), "utf8"))
    expect((await run(["token", `--data-dir=${dir}`])).printed).toBe(first.printed)
  })

  it("a data dir without a token: nothing created, the CLI says why (exit 1)", async () => {
    const fresh = join(scratch, "fresh", ".planbridge")
    expect(await run(["token", "--data-dir", fresh])).toEqual({ code: undefined, printed: "" })
    const cli = await runCli("token", "--data-dir", fresh)
    expect(cli).toMatchObject({ code: 1, stdout: "" })
    expect(cli.stderr).toContain(`planbridge token: no token in ${fresh}: \`serve\` stores one there`)
    expect(cli.stderr).toContain("pass the --data-dir the server runs with")
    expect(existsSync(join(scratch, "fresh"))).toBe(false)
  })

  it("a server started with its own token (--token, PLANBRIDGE_TOKEN): the stored one is not printed", async () => {
    const dir = join(scratch, "given")
    loadOrCreateToken(dir)
    // As `serve --token T` records it: this process stands in for the running server.
    const address = { url: "http://127.0.0.1:34317", pid: process.pid, startedAt: new Date().toISOString() }
    writeServerAddress(dir, { ...address, tokenSource: "given" })
    expect(await run(["token", "--data-dir", dir])).toEqual({ code: undefined, printed: "" })
    const cli = await runCli("token", "--data-dir", dir)
    expect(cli).toMatchObject({ code: 1, stdout: "" })
    expect(cli.stderr).toContain("was started with --token or PLANBRIDGE_TOKEN")
    writeServerAddress(dir, { ...address, tokenSource: "data-dir" })
    expect((await run(["token", "--data-dir", dir])).code).toBe(0)
  })

  it("leaves anything else to the CLI, and prints nothing then", async () => {
    for (const argv of [
      ["token", "--bogus"],
      ["token", "--data-dir"],
      ["token", "--data-dir", "--help"],
      ["token", "--data-dir="],
      ["token", "--help"],
      ["serve"],
      ["--help", "serve"],
      []
    ]) {
      expect(await run(argv), argv.join(" ")).toEqual({ code: undefined, printed: "" })
    }
  })

  it("a data dir it cannot use is the CLI's to report", async () => {
    const file = join(scratch, "data", "token")
    expect(await run(["token", "--data-dir", join(file, "below-a-file")])).toEqual({ code: undefined, printed: "" })
  })

  it("--help only when the CLI would print it plain: not on a terminal, or with NO_COLOR set", async () => {
    expect(await run(["--help"])).toEqual({ code: 0, printed: HELP })
    expect(await run(["-h"])).toEqual({ code: 0, printed: HELP })
    expect((await run(["--help"], { stdoutIsTerminal: true })).code).toBeUndefined()
    expect((await run(["--help"], { stdoutIsTerminal: true, env: { NO_COLOR: "1" } })).code).toBe(0)
    expect((await run(["--help"], { stdoutIsTerminal: true, env: { NO_COLOR: "" } })).code).toBeUndefined()
    // From the sources nothing was rendered: the CLI prints it.
    expect(await run(["--help"], { plainHelp: () => undefined })).toEqual({ code: undefined, printed: "" })
  })
})
