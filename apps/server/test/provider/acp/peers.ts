import { writeFileSync } from "node:fs"
import { join } from "node:path"

/** Offline set-up of the real ACP agents (see the recipes in the project's peer notes). */

/** `$CODEX_HOME/config.toml` for codex-acp: the scripted model on loopback, no vendor traffic. */
export const writeCodexHome = (home: string, baseUrl: string): void => {
  writeFileSync(
    join(home, "config.toml"),
    [
      'model = "gpt-5.4"',
      'model_provider = "mock"',
      "suppress_unstable_features_warning = true",
      "[model_providers.mock]",
      'name = "mock"',
      `base_url = "${baseUrl}"`,
      'wire_api = "responses"',
      'env_key = "MOCK_KEY"',
      "request_max_retries = 0",
      "stream_max_retries = 0",
      "[features]",
      "plugins = false",
      // Questions outside plan mode too (codex-acp 2.6 asks them as form elicitations).
      "default_mode_request_user_input = true",
      "[tools.update_plan]",
      "enabled = true",
      ""
    ].join("\n")
  )
}

/** The environment of claude-agent-acp (and the Claude Code CLI it runs) against a scripted model. */
export const claudeEnv = (home: string, baseUrl: string): Record<string, string | undefined> => ({
  PATH: process.env.PATH,
  HOME: home,
  ANTHROPIC_BASE_URL: baseUrl,
  ANTHROPIC_API_KEY: "mock-key",
  ANTHROPIC_MODEL: "claude-sonnet-4-5",
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_TELEMETRY: "1",
  DISABLE_ERROR_REPORTING: "1",
  DISABLE_AUTOUPDATER: "1",
  // TodoWrite (what claude-agent-acp turns into ACP plan updates) is off by default in CLI 2.1.
  CLAUDE_CODE_ENABLE_TASKS: "0",
  // Otherwise the CLI defers TodoWrite behind ToolSearch (claude-agent-acp 0.101).
  ENABLE_TOOL_SEARCH: "false",
  CLAUDE_CONFIG_DIR: join(home, ".claude"),
  IS_SANDBOX: "1"
})
