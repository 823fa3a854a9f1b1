import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { createInterface } from "node:readline"

/** A `planbridge serve --replay DIR` child process on a free loopback port. */
export interface ReplayServer {
  /** `http://127.0.0.1:<port>`: the web UI at `/`, the WebSocket at `/ws`. */
  readonly url: string
  readonly token: string
  /** The server process, e.g. to check that it started no provider program. */
  readonly pid: number
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and removes its scratch data dir. */
  readonly close: () => Promise<void>
}

export interface ReplayServerOptions {
  /** The recorded transcripts (`*.jsonl`, one sub-directory deep), e.g. Planbridge's `fixtures/`. */
  readonly dir: string
  /** Refuse an answer that differs from the recorded one (default: accept it with a `runtime.warning`). */
  readonly strict?: boolean
  /** The recorded pace times this (default 1; 0 plays without waiting). */
  readonly speed?: number
  /** The `planbridge` CLI to run (default: `@planbridge/server`'s `bin/planbridge.mjs`). */
  readonly bin?: string
  /** Extra environment for the server. */
  readonly env?: Readonly<Record<string, string>>
  /** How long the server may take to listen (default 30 s). */
  readonly startTimeoutMs?: number
}

const defaultBin = (): string => createRequire(import.meta.url).resolve("@planbridge/server/bin/planbridge.mjs")

/** The address and token in `serve`'s start-up output. */
const LISTENING = /^planbridge listening on (http:\/\/\S+) /u
const WEB_UI = /^web UI: \S+#token=(\S+)/u

/**
 * Starts `planbridge serve --replay DIR --port 0` in a scratch data dir and resolves once it
 * listens. Fails with the server's own message (an unknown directory, a malformed transcript
 * named by path and line) when it exits first, or after `startTimeoutMs`.
 */
export const startReplayServer = (options: ReplayServerOptions): Promise<ReplayServer> => {
  const dataDir = mkdtempSync(join(tmpdir(), "planbridge-replay-"))
  const args = [options.bin ?? defaultBin(), "serve", "--replay", resolve(options.dir), "--port", "0"]
  args.push("--host", "127.0.0.1", "--data-dir", dataDir, "--log-level", "silent")
  if (options.strict === true) args.push("--replay-strict")
  if (options.speed !== undefined) args.push("--replay-speed", String(options.speed))
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const exited = new Promise<void>((done) => child.once("exit", () => done()))
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM")
      const killer = setTimeout(() => child.kill("SIGKILL"), 5_000)
      await exited
      clearTimeout(killer)
    }
    rmSync(dataDir, { recursive: true, force: true })
  }
  return new Promise<ReplayServer>((resolveStarted, reject) => {
    let stderr = ""
    let url: string | undefined
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-8192)))
    const timer = setTimeout(() => {
      void close()
      reject(new Error(`planbridge serve --replay did not listen within ${options.startTimeoutMs ?? 30_000} ms`))
    }, options.startTimeoutMs ?? 30_000)
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      rmSync(dataDir, { recursive: true, force: true })
      reject(new Error(`planbridge serve --replay exited (${code ?? signal}) before it listened: ${stderr.trim()}`))
    })
    createInterface({ input: child.stdout }).on("line", (line) => {
      url ??= LISTENING.exec(line)?.[1]
      const token = WEB_UI.exec(line)?.[1]
      if (url === undefined || token === undefined || child.pid === undefined) return
      clearTimeout(timer)
      resolveStarted({ url, token: decodeURIComponent(token), pid: child.pid, close })
    })
  })
}
