import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startDemoProviders, type DemoProviders } from "../../../../apps/server/src/demo/DemoProviders.ts"
import { startServer, type RunningServer } from "../../../../apps/server/src/http/HttpServer.ts"
import { assertLoopbackOnly } from "../../../../apps/server/test/support/loopbackOnly.ts"

/**
 * What the built client is tried against: the server as `planbridge serve --demo` runs it (the
 * real provider programs, each against the demo's scripted model on loopback), in this process.
 */
export interface DemoServer {
  readonly server: RunningServer
  readonly demo: DemoProviders
  /** A scratch working directory for sessions. */
  readonly cwd: string
  /** Stops the server and starts it again on the same data dir (so token) and port. */
  readonly restart: () => Promise<void>
  readonly close: () => Promise<void>
}

export const clientRoot = fileURLToPath(new URL("../..", import.meta.url))
const repoRoot = fileURLToPath(new URL("../../../..", import.meta.url))

/**
 * Builds @planbridge/contracts and @planbridge/client as `npm run build` does (dist/, what their
 * package.json exports name): what these tests load is always the current source, built. Test
 * files run in parallel: one builds (holding a lock directory) while the others wait for the
 * lock to go, so that none reads a dist/ being written.
 */
export const buildClient = async (): Promise<void> => {
  const lock = join(clientRoot, "dist.building")
  try {
    mkdirSync(lock)
  } catch {
    const deadline = Date.now() + 120_000
    while (existsSync(lock)) {
      if (Date.now() > deadline) throw new Error(`${lock} stayed for 2 minutes: remove it if no build runs`)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    return
  }
  try {
    const built = spawnSync(
      "npm",
      ["run", "build", "--workspace", "@planbridge/contracts", "--workspace", "@planbridge/client"],
      { cwd: repoRoot, encoding: "utf8" }
    )
    if (built.status !== 0) throw new Error(`building the client failed:\n${built.stdout}\n${built.stderr}`)
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}

export const startDemoServer = async (
  extra: { readonly allowedOrigins?: ReadonlyArray<string> } = {}
): Promise<DemoServer> => {
  assertLoopbackOnly()
  const dataDir = mkdtempSync(join(tmpdir(), "planbridge-client-demo-data-"))
  const cwd = mkdtempSync(join(tmpdir(), "planbridge-client-demo-cwd-"))
  const demo = await startDemoProviders()
  const options = {
    dataDir,
    host: "127.0.0.1",
    port: 0,
    logLevel: "silent" as const,
    providers: demo.providers,
    ...extra
  }
  let server = await startServer(options)
  return {
    get server() {
      return server
    },
    demo,
    cwd,
    restart: async () => {
      const { port } = server
      await server.close()
      server = await startServer({ ...options, port })
    },
    close: async () => {
      await server.close()
      await demo.close()
      for (const dir of [dataDir, cwd]) rmSync(dir, { recursive: true, force: true })
    }
  }
}

export interface ExampleRun {
  /** What it printed so far. */
  readonly stdout: () => string
  /** Resolves when stdout holds `text`. */
  readonly printed: (text: string) => Promise<void>
  /** Resolves with its exit code and output; rejects after `timeoutMs` (and kills it). */
  readonly exited: Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>
}

/**
 * Runs `examples/<name>` with plain `node` (no TypeScript loader, no inherited NODE_OPTIONS), as a
 * user would: `@planbridge/client` resolves through the workspace's node_modules to its build.
 */
export const runExample = (
  name: string,
  args: ReadonlyArray<string>,
  env: { readonly url: string; readonly token: string; readonly cwd: string },
  timeoutMs: number
): ExampleRun => {
  const child = spawn(process.execPath, [join(clientRoot, "examples", name), ...args], {
    cwd: env.cwd,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      PLANBRIDGE_URL: env.url,
      PLANBRIDGE_TOKEN: env.token,
      PLANBRIDGE_CWD: env.cwd
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  const watchers = new Set<() => void>()
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8")
    for (const watcher of [...watchers]) watcher()
  })
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${name} did not finish in ${timeoutMs} ms; stdout:\n${stdout}\nstderr:\n${stderr}`))
    }, timeoutMs)
    child.on("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
  const printed = (text: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (stdout.includes(text)) {
          watchers.delete(check)
          resolve()
        }
      }
      watchers.add(check)
      check()
      exited.then(() => reject(new Error(`${name} exited without printing '${text}':\n${stdout}\n${stderr}`)), reject)
    })
  return { stdout: () => stdout, printed, exited }
}
