import type { SpawnOptions, SpawnedProcess } from "@anthropic-ai/claude-agent-sdk"
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process"
import { PassThrough, type Readable } from "node:stream"
import { Cause, Effect, Exit } from "effect"
import { MAX_LINE_BYTES } from "../lines.ts"
import { unrecorded, type ProcessGroupsService } from "../ProcessGroups.ts"
import { guardCommand, ProviderSpawnError } from "../ProviderSpawn.ts"

/**
 * The Claude Code CLI process: its environment and a spawner that puts it in its own process
 * group, so that closing a session kills everything it started (tools' shells included), under a
 * parent-death signal, and that hands the SDK its stdout bounded to `MAX_LINE_BYTES` a line.
 */

/**
 * Which checklist tool family the CLI offers the model. CLI 2.1.332 offers the incremental
 * `Task*` tools by default and disables `TodoWrite`; `CLAUDE_CODE_ENABLE_TASKS=0` swaps them.
 * The adapter maps both to whole-list `turn.plan.updated` snapshots.
 */
export type ClaudeChecklistTools = "tasks" | "todowrite"

export interface ClaudeEnvInput {
  readonly home: string
  readonly baseUrl: string
  readonly apiKey: string
  /** Default `tasks`. */
  readonly checklistTools?: ClaudeChecklistTools
  readonly extraEnv?: Readonly<Record<string, string>>
}

/** `options.env` replaces the CLI's environment entirely: nothing of ours leaks in. */
export const claudeEnv = (input: ClaudeEnvInput): Record<string, string> => ({
  PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
  HOME: input.home,
  ANTHROPIC_BASE_URL: input.baseUrl,
  ANTHROPIC_API_KEY: input.apiKey,
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_TELEMETRY: "1",
  DISABLE_ERROR_REPORTING: "1",
  DISABLE_AUTOUPDATER: "1",
  // The CLI refuses to skip permission prompts as root outside a sandbox.
  ...(process.getuid?.() === 0 ? { IS_SANDBOX: "1" } : {}),
  ...(input.checklistTools === "todowrite" ? { CLAUDE_CODE_ENABLE_TASKS: "0" } : {}),
  ...input.extraEnv
})

export interface ProcessExit {
  readonly code: number | null
  readonly signal: string | null
}

/** Why we ended the CLI ourselves: a stdout line over `MAX_LINE_BYTES` (how much of it was read). */
export interface LineTooLong {
  readonly bytes: number
}

export interface ClaudeProcessHandle {
  readonly spawn: (options: SpawnOptions) => SpawnedProcess
  /** Resolves when the spawned process has exited (never, if it was never spawned). */
  readonly exited: Promise<ProcessExit>
  readonly isRunning: () => boolean
  readonly killGroup: () => void
  readonly stderrTail: () => string
  /** Set once the CLI wrote a line over the bound: its group is killed and the SDK read up to that line. */
  readonly lineTooLong: () => LineTooLong | undefined
}

/** One implementation for both of `SpawnedProcess`'s listener overloads. */
type SpawnedEvent = "exit" | "error"
type SpawnedListener = ((code: number | null, signal: NodeJS.Signals | null) => void) | ((error: Error) => void)

const signalGroup = (pid: number | undefined, signal: NodeJS.Signals) => {
  if (pid === undefined) return
  try {
    process.kill(-pid, signal)
  } catch {
    // Already gone.
  }
}

/**
 * The CLI's stdout as the SDK gets it, bounded: the SDK reads it with `node:readline`, which
 * buffers a line of any length (up to V8's string limit, where it throws). Whole lines are
 * passed on unchanged; a line that grows over `MAX_LINE_BYTES` is dropped from its first byte,
 * the stream ends after the lines before it, and `onTooLong` runs. Backpressure is the SDK's.
 */
const boundedStdout = (stdout: Readable, onTooLong: (bytes: number) => void): Readable => {
  const out = new PassThrough()
  /** The current line's bytes from earlier chunks: passed on with its end, never before. */
  let pending: Array<Buffer> = []
  let pendingBytes = 0
  let stopped = false
  const forward = (pieces: ReadonlyArray<Buffer>) => {
    let ok = true
    for (const piece of pieces) ok = out.write(piece) && ok
    if (!ok) {
      stdout.pause()
      out.once("drain", () => stdout.resume())
    }
  }
  stdout.on("data", (chunk: Buffer) => {
    if (stopped) return
    /** Where the lines completed by this chunk end in it. */
    let complete = 0
    let carried = pendingBytes
    let tooLong: number | undefined
    for (let nl = chunk.indexOf(0x0a); nl !== -1 && tooLong === undefined; nl = chunk.indexOf(0x0a, complete)) {
      const bytes = carried + nl - complete
      if (bytes > MAX_LINE_BYTES) tooLong = bytes
      else {
        carried = 0
        complete = nl + 1
      }
    }
    const tail = carried + chunk.length - complete
    if (tooLong === undefined && tail > MAX_LINE_BYTES) tooLong = tail
    if (complete > 0) {
      forward([...pending, chunk.subarray(0, complete)])
      pending = []
      pendingBytes = 0
    }
    if (tooLong !== undefined) {
      stopped = true
      pending = []
      out.end()
      return onTooLong(tooLong)
    }
    if (complete < chunk.length) {
      pending.push(chunk.subarray(complete))
      pendingBytes += chunk.length - complete
    }
  })
  stdout.once("end", () => {
    if (stopped) return
    forward(pending)
    out.end()
  })
  stdout.once("error", (error) => out.destroy(error))
  return out
}

/**
 * `groups` records the CLI's process group (see ProcessGroups.ts); the CLI itself runs under a
 * parent-death signal (ProviderSpawn.ts). A spawn that cannot be guarded or recorded throws,
 * which the SDK reports as a failed start.
 */
export const makeClaudeProcess = (groups: ProcessGroupsService = unrecorded): ClaudeProcessHandle => {
  let child: ChildProcessWithoutNullStreams | undefined
  let release: Effect.Effect<void> = Effect.void
  let stderr = ""
  let running = false
  let tooLong: LineTooLong | undefined
  let onExit: (exit: ProcessExit) => void = () => {}
  const exited = new Promise<ProcessExit>((resolve) => {
    onExit = resolve
  })
  const killGroup = () => {
    if (child?.pid === undefined || !running) return
    signalGroup(child.pid, "SIGKILL")
  }
  return {
    spawn: (options) => {
      const { command, args, env } = options
      const guarded = guardCommand({ command, args, env, cwd: options.cwd ?? process.cwd() })
      if (guarded instanceof ProviderSpawnError) throw new Error(`cannot start ${options.command}: ${guarded.message}`)
      const proc = spawn(guarded.command, guarded.args, {
        cwd: options.cwd,
        env: guarded.env,
        stdio: ["pipe", "pipe", "pipe"],
        detached: true
      })
      child = proc
      if (proc.pid !== undefined) {
        // Recorded before the session is reported started (that waits for the CLI's first answer).
        const group = { pid: proc.pid, token: guarded.token, command: guarded.display }
        const tracked = Effect.runSyncExit(groups.track(group))
        if (Exit.isFailure(tracked)) {
          signalGroup(proc.pid, "SIGKILL")
          throw new Error(`cannot start ${options.command}: ${String(Cause.squash(tracked.cause))}`)
        }
        release = tracked.value.release
      }
      running = true
      proc.stderr.on("data", (chunk: Buffer) => {
        stderr = (stderr + chunk.toString("utf8")).slice(-4000)
      })
      proc.on("exit", (code, signal) => {
        running = false
        // The tools it started (their shells) must not outlive it.
        signalGroup(proc.pid, "SIGKILL")
        Effect.runSync(release)
        onExit({ code, signal })
      })
      options.signal.addEventListener("abort", killGroup, { once: true })
      const stdout = boundedStdout(proc.stdout, (bytes) => {
        tooLong = { bytes }
        killGroup()
      })
      const spawned: SpawnedProcess = {
        stdin: proc.stdin,
        stdout,
        get killed() {
          return proc.killed
        },
        get exitCode() {
          return proc.exitCode
        },
        get signalCode() {
          return proc.signalCode
        },
        kill: (signal) => proc.kill(signal),
        on: (event: SpawnedEvent, listener: SpawnedListener) => void proc.on(event as string, listener),
        once: (event: SpawnedEvent, listener: SpawnedListener) => void proc.once(event as string, listener),
        off: (event: SpawnedEvent, listener: SpawnedListener) => void proc.off(event as string, listener)
      }
      return spawned
    },
    exited,
    isRunning: () => running,
    killGroup,
    stderrTail: () => stderr,
    lineTooLong: () => tooLong
  }
}
