import { execFile } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { browserOpener } from "../../src/cli/open.ts"
import { loadOrCreateToken } from "../../src/http/Security.ts"

/**
 * `planbridge open` as users run it (a child process): with a desktop it hands the address to
 * xdg-open (here a stand-in that records its argument); without one it prints the address; the
 * token is always in the fragment.
 */
const bin = fileURLToPath(new URL("../../bin/planbridge.mjs", import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), "planbridge-open-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const dataDir = join(scratch, "data")
const token = loadOrCreateToken(dataDir)
const fakeBin = join(scratch, "bin")
const recorded = join(scratch, "opened.txt")
mkdirSync(fakeBin)
// Written aside and renamed: the test waits for the file, and must never read it half-written.
writeFileSync(
  join(fakeBin, "xdg-open"),
  `#!/bin/sh\nprintf '%s' "$1" > '${recorded}.tmp' && mv '${recorded}.tmp' '${recorded}'\n`
)
chmodSync(join(fakeBin, "xdg-open"), 0o755)

const run = async (env: NodeJS.ProcessEnv, ...args: ReadonlyArray<string>) => {
  const base = { ...process.env }
  for (const name of ["DISPLAY", "WAYLAND_DISPLAY", "PLANBRIDGE_TOKEN"]) delete base[name]
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [bin, "open", ...args], {
      env: { ...base, ...env },
      encoding: "utf8"
    })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

const waitForFile = async (path: string) => {
  for (let i = 0; i < 100 && !existsSync(path); i++) await new Promise((r) => setTimeout(r, 50))
  return readFileSync(path, "utf8")
}

describe("planbridge open", () => {
  it("with a display, hands the address (token in the fragment) to xdg-open and does not print the token", async () => {
    const result = await run(
      { DISPLAY: ":0", PATH: `${fakeBin}:${process.env.PATH}` },
      "--data-dir",
      dataDir,
      "--url",
      "http://127.0.0.1:4999"
    )
    expect(result.code).toBe(0)
    expect(await waitForFile(recorded)).toBe(`http://127.0.0.1:4999/#token=${token}`)
    expect(result.stdout).toBe(`opened http://127.0.0.1:4999/ with ${join(fakeBin, "xdg-open")}\n`)
    expect(result.stdout).not.toContain(token)
  })

  it("headless, prints the address instead; PLANBRIDGE_TOKEN wins over the file", async () => {
    const at = ["--data-dir", dataDir, "--url", "http://127.0.0.1:4998"]
    const printed = await run({ PATH: `${fakeBin}:${process.env.PATH}` }, ...at)
    expect(printed).toEqual({ code: 0, stdout: `http://127.0.0.1:4998/#token=${token}\n`, stderr: "" })
    const fromEnv = await run({ PLANBRIDGE_TOKEN: "env-token" }, ...at)
    expect(fromEnv.stdout).toBe("http://127.0.0.1:4998/#token=env-token\n")
  })

  it("without a token anywhere it fails with a clear message and creates none", async () => {
    const empty = join(scratch, "empty")
    const result = await run({}, "--data-dir", empty, "--url", "http://127.0.0.1:4998")
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("no token")
    expect(existsSync(join(empty, "token"))).toBe(false)
  })

  it("picks macOS's open, xdg-open only with a display, nothing on Windows", () => {
    const path = `${fakeBin}`
    expect(browserOpener("linux", { PATH: path })).toBeUndefined()
    expect(browserOpener("linux", { PATH: path, WAYLAND_DISPLAY: "wayland-0" })).toBe(join(fakeBin, "xdg-open"))
    expect(browserOpener("linux", { PATH: "/nonexistent", DISPLAY: ":0" })).toBeUndefined()
    expect(browserOpener("win32", { PATH: path, DISPLAY: ":0" })).toBeUndefined()
  })
})
