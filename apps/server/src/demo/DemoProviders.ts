import { existsSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import type { RegisteredProvider } from "../orchestration/ProviderRegistry.ts"
import { makeAcpAdapter } from "../provider/acp/AcpAdapter.ts"
import { claudeAcpProfile } from "../provider/acp/profiles/claudeAcp.ts"
import { codexAcpProfile } from "../provider/acp/profiles/codexAcp.ts"
import { makeClaudeAdapter } from "../provider/claude/ClaudeAdapter.ts"
import { CLAUDE_CAPABILITIES, CLAUDE_MODEL } from "../provider/claude/ClaudeModes.ts"
import { makeCodexAdapter } from "../provider/codex/CodexAdapter.ts"
import { codexConfigToml } from "../provider/codex/CodexHome.ts"
import { codexCapabilities } from "../provider/codex/CodexMappingState.ts"
import { claudeDemoTurn } from "./claudeDemoModel.ts"
import { codexDemoTurn } from "./codexDemoModel.ts"
import { startMockMessagesModel, type MockMessagesModel } from "./mockMessagesModel.ts"
import { startMockResponsesModel, type MockResponsesModel } from "./mockResponsesModel.ts"

/**
 * Demo mode (`planbridge serve --demo`): the real provider programs, each against a scripted
 * model that this process serves on 127.0.0.1 (an ephemeral port per provider), with a made-up
 * key and a home of the thread's own in the data dir (kept while the thread may be resumed, as in
 * isolated mode), so no login, no credential of the user's and no network is involved, and
 * nothing is left in /tmp whatever ends the server.
 * The ACP agents are offered where their packages are installed.
 */

export interface DemoProviders {
  readonly providers: ReadonlyArray<RegisteredProvider>
  /** The scripted models (their request logs show what each program really sent). */
  readonly models: DemoModels
  /** Stops the model servers; call after the server closed. */
  readonly close: () => Promise<void>
}

export interface DemoModels {
  readonly codex: MockResponsesModel
  readonly claude: MockMessagesModel
  /** Present when the ACP agent's package is installed. */
  readonly codexAcp?: MockResponsesModel
  readonly claudeAcp?: MockMessagesModel
}

/** Requests each demo model remembers (each carries the whole conversation; the server may run for days). */
const LOGGED_REQUESTS = 50

/** A value no real endpoint accepts: the programs want some key, and it must never be a real one. */
const DEMO_KEY = "planbridge-demo-key"
const DEMO_KEY_VAR = "PLANBRIDGE_DEMO_KEY"

/** The JS entry of an installed package's bin, or undefined when the package is not installed. */
const installedBin = (pkg: string, bin: string): string | undefined => {
  try {
    const root = dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`))
    const path = join(root, bin)
    return existsSync(path) ? path : undefined
  } catch {
    return undefined
  }
}

/** The Claude Code CLI's environment against the demo model (`options.env` replaces the process's). */
const claudeCliEnv = (home: string, baseUrl: string): Record<string, string | undefined> => ({
  PATH: process.env.PATH,
  HOME: home,
  ANTHROPIC_BASE_URL: baseUrl,
  ANTHROPIC_API_KEY: DEMO_KEY,
  ANTHROPIC_MODEL: CLAUDE_MODEL,
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_TELEMETRY: "1",
  DISABLE_ERROR_REPORTING: "1",
  DISABLE_AUTOUPDATER: "1",
  // TodoWrite is what claude-agent-acp turns into ACP plan updates; CLI 2.1 hides it by default,
  // and claude-agent-acp 0.101 defers it behind ToolSearch unless that is off.
  CLAUDE_CODE_ENABLE_TASKS: "0",
  ENABLE_TOOL_SEARCH: "false",
  // Claude Code's own configuration in the thread's home, never the user's.
  CLAUDE_CONFIG_DIR: join(home, ".claude"),
  // The CLI refuses to skip permission prompts as root unless it is told it is sandboxed.
  ...(process.getuid?.() === 0 ? { IS_SANDBOX: "1" } : {})
})

export const startDemoProviders = async (): Promise<DemoProviders> => {
  const cleanups: Array<() => Promise<void>> = []
  const close = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  }
  try {
    const providers: Array<RegisteredProvider> = []
    let codexAcp: MockResponsesModel | undefined
    let claudeAcp: MockMessagesModel | undefined

    const codexModel = await startMockResponsesModel({
      maxLogged: LOGGED_REQUESTS,
      unscripted: codexDemoTurn({ questions: true, planTags: true })
    })
    cleanups.push(codexModel.close)
    providers.push({
      adapter: makeCodexAdapter({
        model: "gpt-5.5",
        baseUrl: codexModel.baseUrl,
        envKey: DEMO_KEY_VAR,
        apiKey: DEMO_KEY,
        providerId: "planbridge-demo",
        // Asks before a command that needs more than the sandbox allows (the command scenario).
        approvalPolicy: "on-request"
      }),
      capabilities: codexCapabilities,
      label: "Codex (demo)",
      demo: true
    })

    const claudeModel = await startMockMessagesModel({
      maxLogged: LOGGED_REQUESTS,
      unscripted: claudeDemoTurn({ questions: true })
    })
    cleanups.push(claudeModel.close)
    providers.push({
      adapter: makeClaudeAdapter({ baseUrl: claudeModel.baseUrl, apiKey: DEMO_KEY, checklistTools: "todowrite" }),
      capabilities: CLAUDE_CAPABILITIES,
      label: "Claude (demo)",
      demo: true
    })

    const codexAcpBin = installedBin("@agentclientprotocol/codex-acp", "dist/index.js")
    if (codexAcpBin !== undefined) {
      const model = await startMockResponsesModel({
        maxLogged: LOGGED_REQUESTS,
        // codex-acp 2.6 asks (form elicitations) and proposes plans (plan mode, `plan_update`).
        unscripted: codexDemoTurn({ questions: true, planTags: true })
      })
      cleanups.push(model.close)
      codexAcp = model
      const profile = codexAcpProfile({ command: process.execPath, args: [codexAcpBin] })
      providers.push({
        // Each thread's CODEX_HOME is its directory in the data dir (its sessions, what
        // session/load reads after a restart), the config pointing at this run's model.
        adapter: makeAcpAdapter(profile, {
          prepareHome: (home) => {
            // A model outside codex-acp's catalog (it runs its own Codex 0.166).
            const config = codexConfigToml({
              model: "gpt-5.4",
              baseUrl: model.baseUrl,
              envKey: DEMO_KEY_VAR,
              providerId: "demo"
            })
            writeFileSync(join(home, "config.toml"), config, { mode: 0o600 })
            return { PATH: process.env.PATH, HOME: home, CODEX_HOME: home, [DEMO_KEY_VAR]: DEMO_KEY }
          }
        }),
        capabilities: profile.capabilities,
        label: "codex-acp (demo)",
        demo: true
      })
    }

    const claudeAcpBin = installedBin("@agentclientprotocol/claude-agent-acp", "dist/index.js")
    if (claudeAcpBin !== undefined) {
      const model = await startMockMessagesModel({
        maxLogged: LOGGED_REQUESTS,
        unscripted: claudeDemoTurn({ questions: false })
      })
      cleanups.push(model.close)
      claudeAcp = model
      const profile = claudeAcpProfile({ command: process.execPath, args: [claudeAcpBin] })
      providers.push({
        // HOME is the thread's directory in the data dir: the CLI's session log is there after a restart.
        adapter: makeAcpAdapter(profile, { prepareHome: (home) => claudeCliEnv(home, model.baseUrl) }),
        capabilities: profile.capabilities,
        label: "claude-agent-acp (demo)",
        demo: true
      })
    }
    const models: DemoModels = {
      codex: codexModel,
      claude: claudeModel,
      ...(codexAcp === undefined ? {} : { codexAcp }),
      ...(claudeAcp === undefined ? {} : { claudeAcp })
    }
    return { providers, models, close }
  } catch (error) {
    await close()
    throw error
  }
}
