import type { SpawnOptions, SpawnedProcess } from "@anthropic-ai/claude-agent-sdk"
import { PassThrough, type Readable } from "node:stream"
import { Effect } from "effect"
import { INBOUND_QUEUE_LINES, readLinesPaced, type FlowProbe } from "../inbound.ts"
import { definedFields } from "../../util/definedFields.ts"
import { MAX_LINE_BYTES } from "../lines.ts"
import { unrecorded, type ProcessGroupsService } from "../ProcessGroups.ts"
import { spawnProviderProcessSync, type ProviderProcess } from "../kernel/ProviderProcess.ts"
import { claudeUserEnv, type ClaudeEnvAdditions } from "./ClaudeUserEnv.ts"

/**
 * The Claude Code CLI process: its environment and a spawner that puts it in its own process
 * group, so that closing a session kills everything it started (tools' shells included), under a
 * parent-death signal, and that hands the SDK its stdout bounded to `MAX_LINE_BYTES` a line.
 */

export interface ClaudeEnvInput extends ClaudeEnvAdditions {
  readonly home: string
  readonly baseUrl: string
  readonly apiKey: string
}

/** `options.env` replaces the CLI's environment entirely: nothing leaks in but `claudeUserEnv`'s additions. */
export const claudeEnv = (input: ClaudeEnvInput): Record<string, string> =>
  claudeUserEnv({
    ...input,
    userEnv: {
      PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
      HOME: input.home,
      ANTHROPIC_BASE_URL: input.baseUrl,
      ANTHROPIC_API_KEY: input.apiKey,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1"
    }
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
  /** The kernel's graceful end of the CLI's group (stdin, SIGTERM, grace, SIGKILL); idempotent. */
  readonly shutdown: Effect.Effect<void>
  readonly stderrTail: () => string
  /** Set once the CLI wrote a line over the bound: its group is killed and the SDK read up to that line. */
  readonly lineTooLong: () => LineTooLong | undefined
  /** Paces reading the CLI's stdout by the SDK's read-ahead (see `sdkReadAhead`), from now on. */
  readonly paceBy: (readAhead: () => number) => void
  /** The session took a message from the SDK: reading may resume. */
  readonly taken: () => void
}

/** How much of the CLI's stderr is kept (its tail). */
const STDERR_TAIL = 4000

/** One implementation for both of `SpawnedProcess`'s listener overloads. */
type SpawnedEvent = "exit" | "error"
type SpawnedListener = ((code: number | null, signal: NodeJS.Signals | null) => void) | ((error: Error) => void)

/**
 * The Agent SDK (0.3.333) reads every line of the CLI's stdout as soon as it comes into a queue
 * of its own (`Query.inputStream.queue`, an array), whatever the session's reader has taken:
 * that queue has no bound. This is how many messages it holds, read through the SDK's object;
 * undefined when the SDK keeps them elsewhere (a test pins the shape to the SDK version).
 */
export const sdkReadAhead = (query: unknown): (() => number) | undefined => {
  const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null
  if (!isRecord(query) || !isRecord(query.inputStream) || !Array.isArray(query.inputStream.queue)) return undefined
  const stream = query.inputStream
  return () => (Array.isArray(stream.queue) ? stream.queue.length : 0)
}

/** Reading the CLI's stdout stops while the SDK holds this many messages the session has not taken. */
export const CLAUDE_READ_AHEAD = INBOUND_QUEUE_LINES

/**
 * The CLI's stdout as the SDK gets it, through the shared paced reader (`readLinesPaced`): the
 * SDK reads it with `node:readline`, which buffers a line of any length (up to V8's string
 * limit, where it throws), so a line over `MAX_LINE_BYTES` is never passed on: the stream ends
 * after the lines before it and `onTooLong` runs at once. And the bound is the SDK's queue: a
 * line keeps its place in the reader's queue until the SDK's read-ahead (`readAhead`, messages
 * the session has not taken) no longer holds it, so while the SDK holds `CLAUDE_READ_AHEAD`
 * messages the CLI's stdout is not read and a flood waits in the CLI, not in this process (the
 * SDK's queue holds at most that plus the lines of one read, 64 KiB). Lines are passed on
 * unchanged.
 */
const NEWLINE = Buffer.from("\n")

const pacedStdout = (
  stdout: Readable,
  onTooLong: (bytes: number) => void,
  readAhead: () => number,
  probe?: FlowProbe
) => {
  const out = new PassThrough()
  /** The places of lines passed on, oldest first: each is freed once the SDK's queue no longer holds it. */
  const places: Array<() => void> = []
  const settle = () => {
    for (let queued = readAhead(); places.length > queued;) places.shift()!()
  }
  const end = () => (out.writableEnded ? undefined : out.end())
  readLinesPaced({
    stream: stdout,
    maxLines: CLAUDE_READ_AHEAD,
    ...definedFields({ probe }),
    onTooLong: (line) => onTooLong(line.bytes),
    onLine: (line, release) => {
      if (line.bytes > MAX_LINE_BYTES) return end()
      // One write per line: a reader of single chunks gets whole lines.
      out.write(line.unterminated === true ? line.data : Buffer.concat([line.data, NEWLINE]))
      places.push(release)
      // Lines the SDK consumed without queueing them (control responses) free their places here.
      settle()
    },
    onEnd: (error) => (error === undefined ? end() : out.destroy(error))
  })
  return { stdout: out, settle }
}

/**
 * `groups` records the CLI's process group (see ProcessGroups.ts); the CLI itself runs under a
 * parent-death signal (kernel/ProviderProcess.ts). A spawn that cannot be guarded or recorded throws,
 * which the SDK reports as a failed start.
 */
export const makeClaudeProcess = (
  groups: ProcessGroupsService = unrecorded,
  probe?: FlowProbe
): ClaudeProcessHandle => {
  let cli: ProviderProcess | undefined
  let running = false
  let tooLong: LineTooLong | undefined
  let onExit: (exit: ProcessExit) => void = () => {}
  /** The SDK's read-ahead, once its query exists (`paceBy`). */
  let readAhead: (() => number) | undefined
  /** Frees the places of lines the SDK's queue no longer holds (once the CLI is spawned). */
  let settle: () => void = () => undefined
  const exited = new Promise<ProcessExit>((resolve) => {
    onExit = resolve
  })
  const killGroup = () => {
    if (cli !== undefined && running) cli.signalGroup("SIGKILL")
  }
  return {
    spawn: (options) => {
      const { command, args, env } = options
      // Recorded before the session is reported started (that waits for the CLI's first answer).
      const started = spawnProviderProcessSync(
        { command, args, env, cwd: options.cwd ?? process.cwd(), stderrLimit: STDERR_TAIL },
        groups
      )
      cli = started
      const proc = started.child
      running = true
      proc.on("exit", (code, signal) => {
        running = false
        onExit({ code, signal })
      })
      options.signal.addEventListener("abort", killGroup, { once: true })
      const paced = pacedStdout(
        proc.stdout,
        (bytes) => {
          tooLong = { bytes }
          killGroup()
        },
        () => readAhead?.() ?? 0,
        probe
      )
      settle = paced.settle
      return {
        stdin: proc.stdin,
        stdout: paced.stdout,
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
    },
    exited,
    shutdown: Effect.suspend(() => cli?.shutdown ?? Effect.void),
    stderrTail: () => cli?.stderrTail() ?? "",
    lineTooLong: () => tooLong,
    paceBy: (sdkQueue) => {
      readAhead = sdkQueue
    },
    taken: () => settle()
  }
}
