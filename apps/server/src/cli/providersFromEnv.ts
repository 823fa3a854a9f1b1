import type { RegisteredProvider } from "../orchestration/ProviderRegistry.ts"
import { makeClaudeAdapter } from "../provider/claude/ClaudeAdapter.ts"
import { CLAUDE_CAPABILITIES } from "../provider/claude/ClaudeModes.ts"
import { makeCodexAdapter } from "../provider/codex/CodexAdapter.ts"
import { codexCapabilities } from "../provider/codex/CodexMappingState.ts"

/**
 * The providers `planbridge serve` offers, configured from the environment. A provider whose
 * model endpoint has no credentials is not offered (rather than failing at the first turn).
 *   Codex:  OPENAI_API_KEY, PLANBRIDGE_CODEX_BASE_URL (default https://api.openai.com/v1), PLANBRIDGE_CODEX_MODEL
 *   Claude: ANTHROPIC_API_KEY, PLANBRIDGE_CLAUDE_BASE_URL (default https://api.anthropic.com), PLANBRIDGE_CLAUDE_MODEL
 */
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
        ...(env.PLANBRIDGE_CLAUDE_MODEL === undefined ? {} : { model: env.PLANBRIDGE_CLAUDE_MODEL })
      }),
      capabilities: CLAUDE_CAPABILITIES
    })
  }
  return providers
}
