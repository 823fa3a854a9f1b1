import { ServerStartError } from "../http/HttpServer.ts"
import type { RegisteredProvider } from "../orchestration/ProviderRegistry.ts"
import { makeAcpAdapter } from "../provider/acp/adapter.ts"
import { cursorProfile } from "../provider/acp/profiles/cursor.ts"
import { makeClaudeAdapter } from "../provider/claude/ClaudeAdapter.ts"
import { CLAUDE_CAPABILITIES } from "../provider/claude/ClaudeModes.ts"
import type { ClaudeChecklistTools } from "../provider/claude/ClaudeProcess.ts"
import { makeCodexAdapter } from "../provider/codex/CodexAdapter.ts"
import { codexCapabilities } from "../provider/codex/CodexMappingState.ts"
import { definedFields } from "../util/definedFields.ts"

/**
 * The providers `planbridge serve` offers, configured from the environment. A provider whose
 * model endpoint has no credentials is not offered (rather than failing at the first turn).
 *   Codex:  OPENAI_API_KEY, PLANBRIDGE_CODEX_BASE_URL (default https://api.openai.com/v1), PLANBRIDGE_CODEX_MODEL
 *   Claude: ANTHROPIC_API_KEY, PLANBRIDGE_CLAUDE_BASE_URL (default https://api.anthropic.com), PLANBRIDGE_CLAUDE_MODEL,
 *           PLANBRIDGE_CLAUDE_CHECKLIST (`tasks`, the default, or `todowrite`)
 *   Cursor: CURSOR_API_KEY or CURSOR_AUTH_TOKEN, and Cursor's `agent` CLI on PATH (PLANBRIDGE_CURSOR_COMMAND to override)
 */
/** `PLANBRIDGE_CLAUDE_CHECKLIST`: which checklist tools Claude Code offers its model. */
export const claudeChecklistTools = (value: string | undefined): ClaudeChecklistTools => {
  if (value === undefined || value === "" || value === "tasks") return "tasks"
  if (value === "todowrite") return "todowrite"
  throw new ServerStartError(`PLANBRIDGE_CLAUDE_CHECKLIST must be 'tasks' or 'todowrite', not '${value}'`)
}

export const providersFromEnv = (env: NodeJS.ProcessEnv): ReadonlyArray<RegisteredProvider> => {
  const providers: Array<RegisteredProvider> = []
  const openaiKey = env.OPENAI_API_KEY
  if (openaiKey !== undefined && openaiKey.length > 0) {
    providers.push({
      adapter: makeCodexAdapter({
        model: env.PLANBRIDGE_CODEX_MODEL ?? "gpt-5.5",
        baseUrl: env.PLANBRIDGE_CODEX_BASE_URL ?? "https://api.openai.com/v1",
        envKey: "OPENAI_API_KEY",
        apiKey: openaiKey
      }),
      capabilities: codexCapabilities
    })
  }
  const anthropicKey = env.ANTHROPIC_API_KEY
  if (anthropicKey !== undefined && anthropicKey.length > 0) {
    providers.push({
      adapter: makeClaudeAdapter({
        baseUrl: env.PLANBRIDGE_CLAUDE_BASE_URL ?? "https://api.anthropic.com",
        apiKey: anthropicKey,
        checklistTools: claudeChecklistTools(env.PLANBRIDGE_CLAUDE_CHECKLIST),
        ...definedFields({ model: env.PLANBRIDGE_CLAUDE_MODEL })
      }),
      capabilities: CLAUDE_CAPABILITIES
    })
  }
  if ((env.CURSOR_API_KEY ?? env.CURSOR_AUTH_TOKEN ?? "").length > 0) {
    const profile = cursorProfile(
      env.PLANBRIDGE_CURSOR_COMMAND === undefined ? {} : { command: env.PLANBRIDGE_CURSOR_COMMAND }
    )
    providers.push({ adapter: makeAcpAdapter(profile), capabilities: profile.capabilities })
  }
  return providers
}
