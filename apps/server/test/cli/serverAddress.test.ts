import { execFile, spawn, type ChildProcess } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { serverAddressFileIn } from "../../src/cli/serverAddress.ts"
import { loadOrCreateToken } from "../../src/http/Security.ts"
import { runCli } from "./support/runCli.ts"

/**
 * Every command finds the server running on its data dir from `<data dir>/server.json`, which
 * `serve` writes once it listens (here on a port it picked, never 4317) and removes when it stops
 * cleanly; one a SIGKILL left behind is reported, never used. `serve` runs as users run it.
 */
const bin = fileURLToPath(new URL("../../bin/planbridge.mjs", import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), "planbridge-address-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** A shell without provider keys, a display or a token of its own. */
const shellEnv = (): NodeJS.ProcessEnv => {
  const env = { ...process.env }
  for (const name of ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CURSOR_API_KEY", "CURSOR_AUTH_TOKEN"]) delete env[name]
  for (const name of ["PLANBRIDGE_TOKEN", "DISPLAY", "WAYLAND_DISPLAY"]) delete env[name]
  return env
}

interface Serving {
  readonly child: ChildProcess
  readonly url: string
  readonly banner: string
  readonly exited: Promise<number | null>
}

const serve = async (dataDir: string): Promise<Serving> => {
  const args = ["serve", "--credentials", "isolated", "--port", "0", "--log-level", "silent", "--data-dir", dataDir]
  const child = spawn(process.execPath, [bin, ...args], { env: shellEnv() })
  let stdout = ""
  let stderr = ""
  child.stderr.on("data", (chunk: Buffer) => void (stderr += String(chunk)))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += String(chunk)
      if (stdout.includes("  cursor ")) resolve()
    })
    void exited.then(() => reject(new Error(`serve exited before it listened: ${stderr}`)))
  })
  const url = /listening on (http:\/\/\S+)/.exec(stdout)![1]!
  return { child, url, banner: stdout, exited }
}

/** A CLI command in a child process, as a user's shell runs it. */
const cli = async (...args: ReadonlyArray<string>) => {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [bin, ...args], {
      env: shellEnv(),
      encoding: "utf8"
    })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

describe("the running server's address, in the data dir", () => {
  it("serve on a port of its own: open, prompts and token find it; rebuild refuses; a clean stop removes it", async () => {
    const dataDir = join(scratch, "data")
    const server = await serve(dataDir)
    // The port itself, not a substring of the URL: a picked port such as 43171 begins with 4317.
    expect(new URL(server.url).port).not.toBe("4317")
    const [listening, webUi] = server.banner.split("\n")
    // After `npm ci` the bin is in node_modules/.bin, not on PATH: the hints say `npx planbridge`.
    expect(listening).toContain(`token: npx planbridge token --data-dir ${dataDir}`)
    expect(webUi).toMatch(new RegExp(`^web UI: ${server.url}/#token=[\\w-]{43} \\(or: npx planbridge open --data-dir `))

    const file = serverAddressFileIn(dataDir)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(statSync(dataDir).mode & 0o777).toBe(0o700)
    const token = readFileSync(join(dataDir, "token"), "utf8").trim()
    const recorded = readFileSync(file, "utf8")
    expect(recorded).not.toContain(token)
    expect(JSON.parse(recorded)).toMatchObject({ url: server.url, pid: server.child.pid, tokenSource: "data-dir" })

    // No --url: the server on the data dir, not 4317.
    expect(await runCli("prompts", "list", "--data-dir", dataDir)).toEqual({
      code: 0,
      stdout: "no prompts\n",
      stderr: ""
    })
    expect(await cli("open", "--data-dir", dataDir)).toEqual({
      code: 0,
      stdout: `${server.url}/#token=${token}\n`,
      stderr: ""
    })
    expect(await cli("token", "--data-dir", dataDir)).toEqual({ code: 0, stdout: `${token}\n`, stderr: "" })

    // A rebuild that writes would drop the projections under the running server.
    const rebuild = await runCli("rebuild", "--data-dir", dataDir)
    expect(rebuild).toMatchObject({ code: 1, stdout: "" })
    expect(rebuild.stderr).toBe(
      `planbridge rebuild: the server on this data dir is running (process ${server.child.pid}, ${server.url}, ` +
        `per ${file}): stop it first; --dry-run only compares, and may run beside it\n`
    )
    expect(await runCli("rebuild", "--dry-run", "--data-dir", dataDir)).toMatchObject({ code: 0, stderr: "" })

    server.child.kill("SIGTERM")
    expect(await server.exited).toBe(0)
    expect(existsSync(file)).toBe(false)
    // Stopped: said as such, and the rebuild may run.
    const stopped = await runCli("prompts", "list", "--data-dir", dataDir)
    expect(stopped).toMatchObject({ code: 1, stdout: "" })
    expect(stopped.stderr).toContain(`no_server: no server is running on the data dir ${dataDir} (no ${file})`)
    expect(await runCli("rebuild", "--data-dir", dataDir)).toMatchObject({ code: 0, stderr: "" })
  }, 60_000)

  it("a server killed (SIGKILL) leaves its address behind: reported as stale, never used", async () => {
    const dataDir = join(scratch, "killed")
    const server = await serve(dataDir)
    server.child.kill("SIGKILL")
    await server.exited
    const file = serverAddressFileIn(dataDir)
    expect(existsSync(file)).toBe(true)
    const stale =
      `no server is running on the data dir ${dataDir}: ${file} names process ${server.child.pid} at ` +
      `${server.url}, which is gone (the server did not stop cleanly)`

    const list = await runCli("prompts", "list", "--data-dir", dataDir)
    expect(list).toMatchObject({ code: 1, stdout: "" })
    expect(list.stderr).toContain(`planbridge prompts list: no_server: ${stale}; start it with`)
    const json = await runCli("prompts", "list", "--data-dir", dataDir, "--json")
    expect(json).toMatchObject({ code: 1, stdout: "" })
    expect(JSON.parse(json.stderr)).toEqual({ error: { code: "no_server", message: expect.stringContaining(stale) } })
    const open = await cli("open", "--data-dir", dataDir)
    expect(open).toMatchObject({ code: 1, stdout: "" })
    expect(open.stderr).toContain(`planbridge open: ${stale}`)
    // Nothing runs on the data dir, so the rebuild may: it says why it does not refuse.
    const rebuild = await runCli("rebuild", "--data-dir", dataDir)
    expect(rebuild).toMatchObject({ code: 0 })
    expect(rebuild.stderr).toContain(
      `planbridge rebuild: note: ${file} names process ${server.child.pid}, which is gone`
    )
    // An explicit --url is used as given.
    const elsewhere = await runCli("prompts", "list", "--data-dir", dataDir, "--url", server.url)
    expect(elsewhere.stderr).toContain(`unreachable: no server at ${server.url}`)
  }, 60_000)

  it("no address file: the commands say no server runs on the data dir, and guess no port", async () => {
    const dataDir = join(scratch, "never-served")
    loadOrCreateToken(dataDir)
    const list = await runCli("prompts", "show", "p-1", "--data-dir", dataDir)
    expect(list).toMatchObject({ code: 1, stdout: "" })
    expect(list.stderr).toBe(
      `planbridge prompts show: no_server: no server is running on the data dir ${dataDir} ` +
        `(no ${serverAddressFileIn(dataDir)}); start it with \`npx planbridge serve --data-dir ${dataDir}\`, ` +
        `or pass --url\n`
    )
  })
})
