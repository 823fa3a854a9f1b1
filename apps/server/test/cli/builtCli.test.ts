import { execFile, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { PROTOCOL_VERSION } from "@planbridge/contracts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import WebSocket from "ws"
import { loadOrCreateToken } from "../../src/http/Security.ts"

/**
 * What users run: `bin/planbridge.cjs` (the package's bin) on the build (`npm run build`, run by `npm ci` and `npm
 * start`), with no run-time transpiler, loading a provider's SDK only when a session needs it.
 * The build is made here from the sources under test; every loaded module is logged by the
 * `--import` hook of the lazy-loading test (support/moduleLog.mjs). fastify and ws are bundled
 * (scripts/build.mjs), so this checks that they still serve HTTP and WebSocket from the bundle.
 */
const serverDir = fileURLToPath(new URL("../../", import.meta.url))
const bin = join(serverDir, "bin", "planbridge.cjs")
const hook = fileURLToPath(new URL("./support/moduleLog.mjs", import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), "planbridge-built-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
beforeAll(async () => {
  await promisify(execFile)(process.execPath, [join(serverDir, "scripts", "build.mjs")])
}, 120_000)

const PROVIDER_SDKS = ["@anthropic-ai/claude-agent-sdk", "@agentclientprotocol/sdk", "zod"]

let runs = 0
/** The environment of a user's shell: the built CLI, no provider credentials. */
const userEnv = (log: string): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, PLANBRIDGE_MODULE_LOG: log }
  for (const name of ["PLANBRIDGE_FROM_SOURCE", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CURSOR_API_KEY"])
    delete env[name]
  delete env.CURSOR_AUTH_TOKEN
  return env
}
const modulesIn = (log: string) => [
  ...new Set(
    readFileSync(log, "utf8")
      .split("\n")
      .filter((l) => l !== "")
  )
]
const fromPackage = (modules: ReadonlyArray<string>, name: string) =>
  modules.filter((m) => m.includes(`/node_modules/${name}/`))

const answers = (url: string) =>
  new Promise<number>((resolve, reject) => {
    const req = request(url, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.once("error", reject)
    req.end()
  })

describe("the built CLI", () => {
  it("planbridge token and --help run from dist/ by the fast path: no CLI library, no tsx, no TypeScript source", async () => {
    const sourceHelp = await promisify(execFile)(process.execPath, [bin, "--help"], {
      env: { ...userEnv(join(scratch, "unused.log")), PLANBRIDGE_FROM_SOURCE: "1" },
      encoding: "utf8"
    })
    loadOrCreateToken(join(scratch, "data"))
    for (const args of [["token", "--data-dir", join(scratch, "data")], ["--help"]]) {
      const log = join(scratch, `modules-${++runs}.log`)
      const { stdout } = await promisify(execFile)(process.execPath, ["--import", hook, bin, ...args], {
        env: userEnv(log),
        encoding: "utf8"
      })
      // The help the build rendered is the one the sources' CLI prints.
      if (args[0] === "token") expect(stdout).toMatch(/^[\w-]{43}\n$/)
      else expect(stdout).toBe(sourceHelp.stdout)
      const modules = modulesIn(log)
      expect(modules.some((m) => m.endsWith("/apps/server/dist/fast.cjs"))).toBe(true)
      // CommonJS throughout: nothing is resolved as an ES module but the log's hook and the bin itself
      // (an `--import` makes Node resolve the entry point that way; it is still loaded as CommonJS).
      expect(
        modules.filter(
          (m) => m.startsWith("file:") && !m.endsWith("/bin/planbridge.cjs") && !m.includes("/test/cli/support/")
        )
      ).toEqual([])
      expect(modules.some((m) => m.endsWith("/apps/server/dist/main.js"))).toBe(false)
      expect(modules.filter((m) => m.endsWith(".ts"))).toEqual([])
      expect(fromPackage(modules, "tsx")).toEqual([])
      expect(fromPackage(modules, "fastify")).toEqual([])
      // Next to nothing of the build is compiled: not the bundled effect (~820 KB, which a Schema
      // error class in the data dir's checks once pulled in for both).
      const built = modules
        .filter((m) => m.includes("/apps/server/dist/"))
        .reduce((bytes, m) => bytes + statSync(m.startsWith("file:") ? fileURLToPath(m) : m).size, 0)
      expect(built, args.join(" ")).toBeLessThan(64 * 1024)
    }
  })

  it("what the fast path does not answer goes to the CLI: a usage error", async () => {
    const log = join(scratch, `modules-${++runs}.log`)
    const usage = await promisify(execFile)(process.execPath, ["--import", hook, bin, "token", "--bogus"], {
      env: userEnv(log),
      encoding: "utf8"
    }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error
    )
    expect(usage?.code).toBe(2)
    expect(usage?.stderr).toContain("unknown option '--bogus'")
    expect(modulesIn(log).some((m) => m.endsWith("/apps/server/dist/main.js"))).toBe(true)
  })

  it("planbridge serve answers HTTP (migrations found from dist/) and loads no provider SDK until a session", async () => {
    const log = join(scratch, `modules-${++runs}.log`)
    const dataDir = join(scratch, "serve")
    // Isolated credentials: in user mode the login probes start once the server listens, and the
    // Claude probe loads its SDK then (after start-up, but before any session).
    const args = [
      ...["--import", hook, bin, "serve", "--credentials", "isolated"],
      ...["--port", "0", "--log-level", "silent", "--data-dir", dataDir]
    ]
    const child = spawn(process.execPath, args, { env: userEnv(log) })
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => void (stderr += String(chunk)))
    const url = await new Promise<string>((resolve, reject) => {
      let stdout = ""
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += String(chunk)
        const match = /listening on (http:\/\/\S+)/.exec(stdout)
        if (match !== null) resolve(match[1]!)
      })
      void exited.then(() => reject(new Error(`serve exited before it listened: ${stderr}`)))
    })
    // No token: refused, but answered.
    expect(await answers(`${url}/api/prompts`)).toBe(401)
    // The WebSocket protocol works from the bundle too: hello → welcome.
    const { stdout: token } = await promisify(execFile)(process.execPath, [bin, "token", "--data-dir", dataDir], {
      env: userEnv(join(scratch, `modules-${++runs}.log`)),
      encoding: "utf8"
    })
    const welcome = await new Promise<{ type: string }>((resolve, reject) => {
      const socket = new WebSocket(`${url.replace("http", "ws")}/ws`)
      socket.once("error", reject)
      socket.once("open", () =>
        socket.send(JSON.stringify({ type: "hello", protocolVersion: PROTOCOL_VERSION, token: token.trim() }))
      )
      socket.once("message", (data) => {
        resolve(JSON.parse(String(data)) as { type: string })
        socket.close()
      })
    })
    expect(welcome.type).toBe("welcome")
    child.kill("SIGTERM")
    expect(await exited).toBe(0)
    expect(stderr).toBe("")
    const modules = modulesIn(log)
    for (const sdk of PROVIDER_SDKS) expect(fromPackage(modules, sdk), sdk).toEqual([])
    expect(modules.filter((m) => m.endsWith(".ts"))).toEqual([])
  })
})
