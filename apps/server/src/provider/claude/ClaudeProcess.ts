import type { SpawnOptions, SpawnedProcess } from "@anthropic-ai/claude-agent-sdk"
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process"

/**
 * The Claude Code CLI process: its environment and a spawner that puts it in its own process
 * group, so that closing a session kills everything it started (tools' shells included).
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

export interface ClaudeProcessHandle {
  readonly spawn: (options: SpawnOptions) => SpawnedProcess
  /** Resolves when the spawned process has exited (never, if it was never spawned). */
  readonly exited: Promise<ProcessExit>
  readonly isRunning: () => boolean
  readonly killGroup: () => void
  readonly stderrTail: () => string
}

export const makeClaudeProcess = (): ClaudeProcessHandle => {
  let child: ChildProcessWithoutNullStreams | undefined
  let stderr = ""
  let running = false
  let onExit: (exit: ProcessExit) => void = () => {}
  const exited = new Promise<ProcessExit>((resolve) => {
    onExit = resolve
  })
  const killGroup = () => {
    if (child?.pid === undefined || !running) return
    try {
      process.kill(-child.pid, "SIGKILL")
    } catch {
      // Already gone.
    }
  }
  return {
    spawn: (options) => {
      child = spawn(options.command, options.args, {
        cwd: options.cwd,
        env: options.env,
        stdio: ["pipe", "pipe", "pipe"],
        detached: true
      })
      running = true
      child.stderr.on("data", (chunk: Buffer) => {
        stderr = (stderr + chunk.toString("utf8")).slice(-4000)
      })
      child.on("exit", (code, signal) => {
        running = false
        onExit({ code, signal })
      })
      options.signal.addEventListener("abort", killGroup, { once: true })
      return child
    },
    exited,
    isRunning: () => running,
    killGroup,
    stderrTail: () => stderr
  }
}
