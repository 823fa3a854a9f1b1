import { homedir } from "node:os"
import { join } from "node:path"

/**
 * Which checklist tool family the CLI offers the model. CLI 2.1.333 offers the incremental
 * `Task*` tools by default and disables `TodoWrite`; `CLAUDE_CODE_ENABLE_TASKS=0` swaps them.
 * The adapter maps both to whole-list `turn.plan.updated` snapshots.
 */
export type ClaudeChecklistTools = "tasks" | "todowrite"

/** What the session's options add to the CLI's environment, in either credentials mode. */
export interface ClaudeEnvAdditions {
  /** `tasks` (the CLI's default: TaskCreate/TaskUpdate/…) or `todowrite` (TodoWrite). */
  readonly checklistTools?: ClaudeChecklistTools
  /** Added to the CLI's environment (tests). */
  readonly extraEnv?: Readonly<Record<string, string>>
}

/**
 * Isolated (a scratch HOME, our endpoint and key, no settings) or the user's own Claude Code
 * (their HOME or CLAUDE_CONFIG_DIR, their login, their user/project/local settings).
 */
export type ClaudeCredentials =
  | {
      readonly credentials?: "isolated"
      /** The Messages API the CLI talks to (`ANTHROPIC_BASE_URL`). */
      readonly baseUrl: string
      readonly apiKey?: string
    }
  | {
      readonly credentials: "user"
      /** The user's environment, parent-session variables stripped (`userEnvironment`). */
      readonly userEnv: Readonly<Record<string, string>>
    }

/**
 * `user` credentials mode: the user's environment as it is (their HOME, so that the macOS keychain
 * login stays visible; CLAUDE_CONFIG_DIR when they set one; their ANTHROPIC_BASE_URL), with a
 * parent Claude Code session's variables already stripped (`userEnvironment`). We only add what
 * keeps the CLI from updating itself under the SDK and the sandbox flag it needs as root.
 */
export const claudeUserEnv = (
  input: ClaudeEnvAdditions & {
    readonly userEnv: Readonly<Record<string, string>>
  }
): Record<string, string> => ({
  ...input.userEnv,
  DISABLE_AUTOUPDATER: "1",
  // The CLI refuses to skip permission prompts as root outside a sandbox.
  ...(process.getuid?.() === 0 ? { IS_SANDBOX: "1" } : {}),
  ...(input.checklistTools === "todowrite" ? { CLAUDE_CODE_ENABLE_TASKS: "0" } : {}),
  ...input.extraEnv
})

/**
 * Where Claude Code keeps a thread's session logs (what `resume` reads: `<config dir>/projects/`):
 * in user mode the user's own config dir, recorded but never created or removed by us; else the
 * thread's directory. Here, not in the adapter, so that the server knows it before the adapter loads.
 */
export const claudeHomeFor = (options: ClaudeCredentials, threadDir: string): string =>
  options.credentials === "user"
    ? (options.userEnv.CLAUDE_CONFIG_DIR ?? join(options.userEnv.HOME ?? homedir(), ".claude"))
    : threadDir
