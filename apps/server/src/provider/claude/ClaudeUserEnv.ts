import type { ClaudeChecklistTools } from "./ClaudeProcess.ts"

/**
 * `user` credentials mode: the user's environment as it is (their HOME, so that the macOS keychain
 * login stays visible; CLAUDE_CONFIG_DIR when they set one; their ANTHROPIC_BASE_URL), with a
 * parent Claude Code session's variables already stripped (`userEnvironment`). We only add what
 * keeps the CLI from updating itself under the SDK and the sandbox flag it needs as root.
 */
export const claudeUserEnv = (input: {
  readonly userEnv: Readonly<Record<string, string>>
  readonly checklistTools?: ClaudeChecklistTools
  readonly extraEnv?: Readonly<Record<string, string>>
}): Record<string, string> => ({
  ...input.userEnv,
  DISABLE_AUTOUPDATER: "1",
  ...(process.getuid?.() === 0 ? { IS_SANDBOX: "1" } : {}),
  ...(input.checklistTools === "todowrite" ? { CLAUDE_CODE_ENABLE_TASKS: "0" } : {}),
  ...input.extraEnv
})
