import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { runFastPath, type FastPathInput } from "../../src/cli/fastPath.ts"
import { tokenFileIn } from "../../src/http/Security.ts"

/**
 * The fast path answers only `token [--data-dir DIR]` and a plain `--help`, exactly as the CLI
 * would; everything else is the CLI's (builtCli.test.ts runs both through bin/planbridge.mjs).
 */
const scratch = mkdtempSync(join(tmpdir(), "planbridge-fast-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const HELP = "DESCRIPTION\n  the rendered help\n"
const run = (argv: ReadonlyArray<string>, over: Partial<FastPathInput> = {}) => {
  let printed = ""
  const code = runFastPath({
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
  it("token, with --data-dir DIR or --data-dir=DIR: the token stored in that dir (created once)", () => {
    const dir = join(scratch, "data")
    const first = run(["token", "--data-dir", dir])
    expect(first.code).toBe(0)
    expect(first.printed).toBe(readFileSync(tokenFileIn(dir), "utf8"))
    expect(run(["token", `--data-dir=${dir}`]).printed).toBe(first.printed)
  })

  it("leaves anything else to the CLI, and prints nothing then", () => {
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
      expect(run(argv), argv.join(" ")).toEqual({ code: undefined, printed: "" })
    }
  })

  it("a data dir it cannot use is the CLI's to report", () => {
    const file = join(scratch, "data", "token")
    expect(run(["token", "--data-dir", join(file, "below-a-file")])).toEqual({ code: undefined, printed: "" })
  })

  it("--help only when the CLI would print it plain: not on a terminal, or with NO_COLOR set", () => {
    expect(run(["--help"])).toEqual({ code: 0, printed: HELP })
    expect(run(["-h"])).toEqual({ code: 0, printed: HELP })
    expect(run(["--help"], { stdoutIsTerminal: true }).code).toBeUndefined()
    expect(run(["--help"], { stdoutIsTerminal: true, env: { NO_COLOR: "1" } }).code).toBe(0)
    expect(run(["--help"], { stdoutIsTerminal: true, env: { NO_COLOR: "" } }).code).toBeUndefined()
    // From the sources nothing was rendered: the CLI prints it.
    expect(run(["--help"], { plainHelp: () => undefined })).toEqual({ code: undefined, printed: "" })
  })
})
