import { spawn, type ChildProcess } from "node:child_process"
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { GROUP_TOKEN_ENV, processGroupsDir } from "../../src/provider/ProcessGroups.ts"

/**
 * What the chaos checks share: `planbridge serve` as a child process (the real CLI path), with
 * the Cursor profile running the scripted agent (`PLANBRIDGE_CURSOR_COMMAND`), and what /proc
 * tells about it (memory, descriptors, provider processes by their group token).
 */
export const ROOT = fileURLToPath(new URL("../../../../", import.meta.url))
const SCRIPTED_AGENT = resolve(ROOT, "apps/server/test/provider/acp/scriptedCursorAgent.ts")
const PLANBRIDGE = resolve(ROOT, "apps/server/bin/planbridge.mjs")

/** Temporary directories, removed by `cleanup`. */
const dirs: Array<string> = []
/** The scripted agent's executable, made once (in one of `dirs`). */
let agentCommand: Promise<string> | undefined
export const tempDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(dir)
  return dir
}
export const cleanup = (): void => {
  agentCommand = undefined
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
}

/**
 * An executable that runs the scripted Cursor agent (the profile calls it with `acp`, which the
 * agent ignores): what `PLANBRIDGE_CURSOR_COMMAND` names, as it would name Cursor's `agent`.
 * The agent is bundled to plain JavaScript once (esbuild, which tsx brings): it then starts in
 * about 0.13 s instead of 0.5 s under tsx, which is most of a SIGKILL cycle's session start.
 * Without esbuild it runs under tsx's loader.
 */
export const scriptedAgentCommand = (): Promise<string> => {
  agentCommand ??= (async () => {
    const dir = tempDir("planbridge-chaos-agent-")
    const path = join(dir, "agent")
    let run = `"${process.execPath}" --import tsx "${SCRIPTED_AGENT}"`
    try {
      const esbuild = await import("esbuild")
      const outfile = join(dir, "agent.mjs")
      await esbuild.build({
        entryPoints: [SCRIPTED_AGENT],
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node20",
        outfile,
        logLevel: "silent",
        // Bundled CommonJS dependencies call require.
        banner: { js: 'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);' }
      })
      run = `"${process.execPath}" "${outfile}"`
    } catch {
      // No esbuild: the slower way.
    }
    writeFileSync(path, `#!/bin/sh\ncd "${ROOT}" && exec ${run} "$@"\n`)
    chmodSync(path, 0o755)
    return path
  })()
  return agentCommand
}

/** The environment of a server offering only the Cursor profile, on the scripted agent. */
export const cursorServeEnv = async (extra: Readonly<Record<string, string>> = {}): Promise<Record<string, string>> => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    // No other provider is offered, whatever the caller's environment holds.
    if (value !== undefined && !/^(OPENAI_API_KEY|ANTHROPIC_API_KEY|CURSOR_AUTH_TOKEN)$/.test(name)) env[name] = value
  }
  return { ...env, CURSOR_API_KEY: "chaos-key", PLANBRIDGE_CURSOR_COMMAND: await scriptedAgentCommand(), ...extra }
}

export interface ServeProcess {
  readonly child: ChildProcess
  readonly pid: number
  readonly url: string
  readonly port: number
  readonly token: string
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  /** stderr so far (bounded), for failure messages. */
  readonly stderr: () => string
}

export interface ServeOptions {
  readonly dataDir: string
  readonly env: Readonly<Record<string, string>>
  /** `ulimit -n` for the server (the descriptor probe). */
  readonly fdLimit?: number
  readonly startTimeoutMs?: number
}

/** `planbridge serve --data-dir D --port 0`, resolved once it prints that it listens. */
export const startServe = async (options: ServeOptions): Promise<ServeProcess> => {
  const args = [PLANBRIDGE, "serve", "--data-dir", options.dataDir, "--port", "0", "--log-level", "warn"]
  // `exec` keeps the pid: /proc/<pid> is the server's own.
  const child =
    options.fdLimit === undefined
      ? spawn(process.execPath, args, { cwd: ROOT, env: options.env, stdio: ["ignore", "pipe", "pipe"] })
      : spawn("bash", ["-c", `ulimit -n ${options.fdLimit} && exec "$0" "$@"`, process.execPath, ...args], {
          cwd: ROOT,
          env: options.env,
          stdio: ["ignore", "pipe", "pipe"]
        })
  let stderr = ""
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-16_384)
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) =>
    child.once("exit", (code, signal) => resolveExit({ code, signal }))
  )
  const lines = createInterface({ input: child.stdout! })
  const url = await new Promise<string>((resolveUrl, reject) => {
    const ms = options.startTimeoutMs ?? 30_000
    const timer = setTimeout(() => reject(new Error(`serve did not listen within ${ms} ms: ${stderr}`)), ms)
    lines.on("line", (line) => {
      const match = /^planbridge listening on (http:\/\/[^ ]+) /.exec(line)
      if (match === null) return
      clearTimeout(timer)
      resolveUrl(match[1]!)
    })
    void exited.then(({ code, signal }) => {
      clearTimeout(timer)
      reject(new Error(`serve exited (${code ?? signal}) before listening: ${stderr}`))
    })
  })
  // Whatever else it prints is drained (a full pipe would block the server).
  lines.on("line", () => undefined)
  const token = readFileSync(join(options.dataDir, "token"), "utf8").trim()
  return { child, pid: child.pid!, url, port: Number(new URL(url).port), token, exited, stderr: () => stderr }
}

/** SIGKILL, and wait until the process is gone. */
export const killServe = async (server: ServeProcess): Promise<void> => {
  server.child.kill("SIGKILL")
  await server.exited
}

/** SIGTERM (a clean stop); SIGKILL after `ms`. */
export const stopServe = async (server: ServeProcess, ms = 10_000): Promise<void> => {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return
  server.child.kill("SIGTERM")
  const timer = setTimeout(() => server.child.kill("SIGKILL"), ms)
  await server.exited
  clearTimeout(timer)
}

// ---- /proc ----------------------------------------------------------------------------------

const statusField = (pid: number, field: string): number | undefined => {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return match === null ? undefined : Number(match[1]) * 1024
  } catch {
    return undefined
  }
}
/** Resident memory now, in bytes. */
export const rssOf = (pid: number): number | undefined => statusField(pid, "VmRSS")
/** The most resident memory the process ever had (the kernel's high-water mark), in bytes. */
export const peakRssOf = (pid: number): number | undefined => statusField(pid, "VmHWM")
export const openFds = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length

/** Running, i.e. neither gone nor a zombie. */
export const alive = (pid: number): boolean => {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") === false
  } catch {
    return false
  }
}

/** The group tokens a data dir's process-group records name (provider groups of live or dead runs). */
export const recordedGroupTokens = (dataDir: string): ReadonlyArray<string> => {
  const tokens: Array<string> = []
  let files: ReadonlyArray<string> = []
  try {
    files = readdirSync(processGroupsDir(dataDir))
  } catch {
    return tokens
  }
  for (const file of files) {
    try {
      const record = JSON.parse(readFileSync(join(processGroupsDir(dataDir), file), "utf8")) as {
        readonly groups?: ReadonlyArray<{ readonly token?: unknown }>
      }
      for (const group of record.groups ?? []) if (typeof group.token === "string") tokens.push(group.token)
    } catch {
      // A record being replaced right now; the next look finds it.
    }
  }
  return tokens
}

/** Live processes whose environment carries one of `tokens` as their process-group token. */
export const processesCarrying = (tokens: ReadonlySet<string>): ReadonlyArray<number> => {
  if (tokens.size === 0) return []
  const found: Array<number> = []
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    let environ: string
    try {
      environ = readFileSync(`/proc/${name}/environ`, "latin1")
    } catch {
      continue
    }
    const entry = environ.split("\0").find((e) => e.startsWith(`${GROUP_TOKEN_ENV}=`))
    const token = entry?.slice(GROUP_TOKEN_ENV.length + 1)
    if (token !== undefined && tokens.has(token) && alive(Number(name))) found.push(Number(name))
  }
  return found
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** Polls (bounded) until `condition` holds; whether it did. */
export const until = async (condition: () => boolean, ms: number, every = 20): Promise<boolean> => {
  const deadline = Date.now() + ms
  while (!condition() && Date.now() < deadline) await sleep(every)
  return condition()
}
