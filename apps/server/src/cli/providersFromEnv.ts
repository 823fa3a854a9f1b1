import { Effect } from "effect"
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { ServerStartError } from "../http/HttpServer.ts"
import type { RegisteredProvider } from "../orchestration/ProviderRegistry.ts"
import type { AcpAdapterOptions } from "../provider/acp/AcpAdapter.ts"
import { profileFor, type AcpAgentEntry } from "../provider/acp/AcpAgentConfig.ts"
import type { AcpProfile } from "../provider/acp/AcpProfile.ts"
import { cursorProfile } from "../provider/acp/profiles/cursor.ts"
import type { ClaudeAdapterOptions } from "../provider/claude/ClaudeAdapter.ts"
import { CLAUDE_CAPABILITIES } from "../provider/claude/ClaudeModes.ts"
import { claudeHomeFor, claudeUserEnv, type ClaudeChecklistTools } from "../provider/claude/ClaudeUserEnv.ts"
import type { CodexAdapterOptions } from "../provider/codex/CodexAdapter.ts"
import { codexCommand, codexHomeFor, codexInstalled, codexUserArgs } from "../provider/codex/CodexLaunch.ts"
import { codexCapabilities } from "../provider/codex/CodexMappingState.ts"
import type { CredentialsMode } from "../provider/credentials/CredentialsMode.ts"
import { userEnvironment } from "../provider/credentials/UserEnvironment.ts"
import { lazyAdapter, lazyProbe } from "../provider/LazyAdapter.ts"
import type { ProviderAdapter } from "../provider/ProviderAdapter.ts"
import { definedFields } from "../util/definedFields.ts"

/**
 * The providers `planbridge serve` offers, configured from the environment and the credentials
 * mode (see CredentialsMode.ts).
 *   user:     Codex and Claude whenever their programs are installed, each with the user's own
 *             login and configuration, listed with whether that login works (a short probe);
 *             PLANBRIDGE_CODEX_MODEL, PLANBRIDGE_CLAUDE_MODEL override the configured models.
 *   isolated: a provider only when its key is set, in a scratch home:
 *     Codex:  OPENAI_API_KEY, PLANBRIDGE_CODEX_BASE_URL (default https://api.openai.com/v1), PLANBRIDGE_CODEX_MODEL
 *     Claude: ANTHROPIC_API_KEY, PLANBRIDGE_CLAUDE_BASE_URL (default https://api.anthropic.com), PLANBRIDGE_CLAUDE_MODEL
 *   both:     PLANBRIDGE_CLAUDE_CHECKLIST (`tasks`, the default, or `todowrite`);
 *             Cursor: CURSOR_API_KEY or CURSOR_AUTH_TOKEN, and Cursor's `agent` CLI on PATH (PLANBRIDGE_CURSOR_COMMAND)
 */
/** `PLANBRIDGE_CLAUDE_CHECKLIST`: which checklist tools Claude Code offers its model. */
export const claudeChecklistTools = (value: string | undefined): ClaudeChecklistTools => {
  if (value === undefined || value === "" || value === "tasks") return "tasks"
  if (value === "todowrite") return "todowrite"
  throw new ServerStartError({
    message: `PLANBRIDGE_CLAUDE_CHECKLIST must be 'tasks' or 'todowrite', not '${value}'`
  })
}

/** Whether the Agent SDK (and the Claude Code CLI it ships) is installed. */
export const claudeInstalled = (): boolean =>
  // The SDK is ESM only and exports no package.json: look for the package where Node would, without
  // resolving (or loading) its entry point at start-up.
  (createRequire(import.meta.url).resolve.paths("@anthropic-ai/claude-agent-sdk") ?? []).some((dir) =>
    existsSync(join(dir, "@anthropic-ai", "claude-agent-sdk", "package.json"))
  )

const keyed = (name: string) => Effect.succeed({ status: "authenticated", method: "apiKey", label: name } as const)

/*
 * Each adapter's module is imported by its provider's first session (LazyAdapter.ts): `serve`
 * answers without compiling the session, transport and mapping code of every provider it offers.
 * What is needed before (capabilities, `homeFor`, whether it is installed) comes from small modules.
 */
const codexAdapter = (options: CodexAdapterOptions): ProviderAdapter =>
  lazyAdapter(
    { provider: "codex", homeFor: (threadDir) => codexHomeFor(options, threadDir), listsSessions: false },
    async () => (await import("../provider/codex/CodexAdapter.ts")).makeCodexAdapter(options)
  )

/** Claude Code keeps its session logs (what `resume` reads) under its config dir: the user's own, in user mode. */
const claudeAdapter = (options: ClaudeAdapterOptions): ProviderAdapter =>
  lazyAdapter(
    {
      provider: "claude",
      homeFor: (threadDir) => claudeHomeFor(options, threadDir),
      listsSessions: false
    },
    async () => (await import("../provider/claude/ClaudeAdapter.ts")).makeClaudeAdapter(options)
  )

/** An ACP agent on the server's environment (no per-thread home): it lists its sessions, keeps no home of ours. */
const acpAdapter = (profile: AcpProfile, options: AcpAdapterOptions & { readonly prepareHome?: undefined } = {}) =>
  lazyAdapter({ provider: profile.provider, listsSessions: true }, async () =>
    (await import("../provider/acp/AcpAdapter.ts")).makeAcpAdapter(profile, options)
  )

const isolatedProviders = (env: NodeJS.ProcessEnv): Array<RegisteredProvider> => {
  const providers: Array<RegisteredProvider> = []
  const openaiKey = env.OPENAI_API_KEY
  if (openaiKey !== undefined && openaiKey.length > 0) {
    providers.push({
      adapter: codexAdapter({
        model: env.PLANBRIDGE_CODEX_MODEL ?? "gpt-5.5",
        baseUrl: env.PLANBRIDGE_CODEX_BASE_URL ?? "https://api.openai.com/v1",
        envKey: "OPENAI_API_KEY",
        apiKey: openaiKey
      }),
      capabilities: codexCapabilities,
      label: "Codex",
      probeAuth: keyed("OPENAI_API_KEY")
    })
  }
  const anthropicKey = env.ANTHROPIC_API_KEY
  if (anthropicKey !== undefined && anthropicKey.length > 0) {
    providers.push({
      adapter: claudeAdapter({
        baseUrl: env.PLANBRIDGE_CLAUDE_BASE_URL ?? "https://api.anthropic.com",
        apiKey: anthropicKey,
        checklistTools: claudeChecklistTools(env.PLANBRIDGE_CLAUDE_CHECKLIST),
        ...definedFields({ model: env.PLANBRIDGE_CLAUDE_MODEL })
      }),
      capabilities: CLAUDE_CAPABILITIES,
      label: "Claude",
      probeAuth: keyed("ANTHROPIC_API_KEY")
    })
  }
  return providers
}

const userProviders = (env: NodeJS.ProcessEnv): Array<RegisteredProvider> => {
  const providers: Array<RegisteredProvider> = []
  const userEnv = userEnvironment(env)
  const checklistTools = claudeChecklistTools(env.PLANBRIDGE_CLAUDE_CHECKLIST)
  if (codexInstalled()) {
    const model = env.PLANBRIDGE_CODEX_MODEL || undefined
    const command = codexCommand()
    providers.push({
      adapter: codexAdapter({ credentials: "user", userEnv, ...definedFields({ model }) }),
      capabilities: codexCapabilities,
      label: "Codex",
      probeAuth: lazyProbe(
        () => import("../provider/codex/CodexAuthProbe.ts"),
        (m) =>
          m.probeCodexAuth({
            command: command.command,
            args: [...command.args, ...codexUserArgs(model)],
            env: userEnv,
            cwd: process.cwd()
          })
      )
    })
  }
  if (claudeInstalled()) {
    providers.push({
      adapter: claudeAdapter({
        credentials: "user",
        userEnv,
        checklistTools,
        ...definedFields({ model: env.PLANBRIDGE_CLAUDE_MODEL || undefined })
      }),
      capabilities: CLAUDE_CAPABILITIES,
      label: "Claude",
      probeAuth: lazyProbe(
        () => import("../provider/claude/ClaudeAuthProbe.ts"),
        (m) => m.probeClaudeAuth({ env: claudeUserEnv({ userEnv }) })
      )
    })
  }
  return providers
}

/** ACP agents added by configuration, each listed with what its `initialize` says about logging in. */
const configuredAcpAgents = (
  env: NodeJS.ProcessEnv,
  mode: CredentialsMode,
  agents: ReadonlyArray<AcpAgentEntry>
): Array<RegisteredProvider> =>
  agents.map((entry) => {
    const profile = profileFor(entry)
    const agentEnv = { ...(mode === "user" ? userEnvironment(env) : env), ...entry.env }
    return {
      adapter: acpAdapter(profile, { env: agentEnv }),
      capabilities: profile.capabilities,
      label: entry.name,
      probeAuth: lazyProbe(
        () => import("../provider/acp/AcpAuthProbe.ts"),
        (m) => m.probeAcpAuth(profile, agentEnv)
      )
    }
  })

export const providersFromEnv = (
  env: NodeJS.ProcessEnv,
  mode: CredentialsMode = "isolated",
  acpAgents: ReadonlyArray<AcpAgentEntry> = []
): ReadonlyArray<RegisteredProvider> => {
  const providers = mode === "user" ? userProviders(env) : isolatedProviders(env)
  providers.push(...configuredAcpAgents(env, mode, acpAgents))
  if ((env.CURSOR_API_KEY ?? env.CURSOR_AUTH_TOKEN ?? "").length > 0) {
    const profile = cursorProfile(
      env.PLANBRIDGE_CURSOR_COMMAND === undefined ? {} : { command: env.PLANBRIDGE_CURSOR_COMMAND }
    )
    providers.push({ adapter: acpAdapter(profile), capabilities: profile.capabilities, label: "Cursor" })
  }
  return providers
}
