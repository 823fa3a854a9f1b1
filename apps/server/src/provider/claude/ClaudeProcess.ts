import type { SpawnOptions, SpawnedProcess } from "@anthropic-ai/claude-agent-sdk"
import { PassThrough, type Readable } from "node:stream"
import { Effect } from "effect"
import { INBOUND_QUEUE_LINES, type FlowProbe } from "../inbound.ts"
import { MAX_LINE_BYTES } from "../lines.ts"
import { unrecorded, type ProcessGroupsService } from "../ProcessGroups.ts"
import { spawnProviderProcessSync, type ProviderProcess } from "../kernel/ProviderProcess.ts"

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
 * The Agent SDK (0.3.332) reads every line of the CLI's stdout as soon as it comes into a queue
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

/** How the CLI's stdout is paced by the SDK's read-ahead (set once the SDK's query exists). */
interface Pacing {
  readAhead: (() => number) | undefined
  /** Runs when the session took a message: reading resumes once the read-ahead is down to half. */
  onTaken: () => void
}

/**
 * The CLI's stdout as the SDK gets it, bounded: the SDK reads it with `node:readline`, which
 * buffers a line of any length (up to V8's string limit, where it throws). Whole lines are
 * passed on unchanged; a line that grows over `MAX_LINE_BYTES` is dropped from its first byte,
 * the stream ends after the lines before it, and `onTooLong` runs. And paced: while the SDK
 * holds `CLAUDE_READ_AHEAD` messages the session has not taken, the CLI's stdout is not read
 * (what one read brought waits here), so a flood waits in the CLI, not in this process. The
 * SDK's queue holds at most `CLAUDE_READ_AHEAD` messages plus the lines of one read (64 KiB).
 */
const boundedStdout = (
  stdout: Readable,
  onTooLong: (bytes: number) => void,
  pacing: Pacing,
  probe?: FlowProbe
): Readable => {
  const out = new PassThrough()
  /** The current line's bytes from earlier chunks: passed on with its end, never before. */
  let pending: Array<Buffer> = []
  let pendingBytes = 0
  let stopped = false
  /** Read while the SDK's read-ahead was full: at most one read of the stream. */
  let held: Array<Buffer> = []
  let ended = false
  let waitingForDrain = false
  let waitingForSession = false
  const pause = () => stdout.pause()
  const resume = () => {
    if (!waitingForDrain && !waitingForSession) stdout.resume()
  }
  const forward = (pieces: ReadonlyArray<Buffer>) => {
    let ok = true
    for (const piece of pieces) ok = out.write(piece) && ok
    if (!ok && !waitingForDrain) {
      waitingForDrain = true
      pause()
      out.once("drain", () => {
        waitingForDrain = false
        resume()
      })
    }
  }
  const take = (chunk: Buffer) => {
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
  }
  const finish = () => {
    if (stopped) return
    forward(pending)
    out.end()
  }
  const full = () => (pacing.readAhead?.() ?? 0) >= CLAUDE_READ_AHEAD
  pacing.onTaken = () => {
    const readAhead = pacing.readAhead?.() ?? 0
    // The message just taken was in the SDK's queue too.
    if (probe !== undefined) probe.highWaterLines = Math.max(probe.highWaterLines, readAhead + 1)
    if (!waitingForSession || readAhead > CLAUDE_READ_AHEAD / 2) return
    waitingForSession = false
    const chunks = held
    held = []
    chunks.forEach(take)
    if (ended) finish()
    else resume()
  }
  stdout.on("data", (chunk: Buffer) => {
    if (stopped) return
    if (waitingForSession || full()) {
      held.push(chunk)
      if (!waitingForSession && probe !== undefined) probe.pauses += 1
      waitingForSession = true
      return pause()
    }
    take(chunk)
  })
  stdout.once("end", () => {
    ended = true
    if (!waitingForSession) finish()
  })
  stdout.once("error", (error) => out.destroy(error))
  return out
}

/**
 * `groups` records the CLI's process group (see ProcessGroups.ts); the CLI itself runs under a
 * parent-death signal (ProviderSpawn.ts). A spawn that cannot be guarded or recorded throws,
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
  const pacing: Pacing = { readAhead: undefined, onTaken: () => undefined }
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
      const stdout = boundedStdout(
        proc.stdout,
        (bytes) => {
          tooLong = { bytes }
          killGroup()
        },
        pacing,
        probe
      )
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
    shutdown: Effect.suspend(() => cli?.shutdown ?? Effect.void),
    stderrTail: () => cli?.stderrTail() ?? "",
    lineTooLong: () => tooLong,
    paceBy: (readAhead) => {
      pacing.readAhead = readAhead
    },
    taken: () => pacing.onTaken()
  }
}
