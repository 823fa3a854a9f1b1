/**
 * Which providers `planbridge serve` offers and why, for its start-up output: an operator who
 * does not see Claude in the picker should read which variable is missing, not guess. The rule
 * is `providersFromEnv`'s (a test holds the two to the same answer for every combination); this
 * module only explains it, and loads no provider code.
 */
export interface ProviderOffer {
  readonly provider: "codex" | "claude" | "cursor"
  readonly offered: boolean
  /** The variables that decided it, and what an offered provider will run against. */
  readonly why: string
}

type Env = Readonly<Record<string, string | undefined>>

/** Whether a required variable counts: unset and empty both leave the provider out. */
const keyState = (env: Env, name: string): { readonly present: boolean; readonly why: string } => {
  const value = env[name]
  if (value === undefined) return { present: false, why: `${name} is not set` }
  if (value === "") return { present: false, why: `${name} is empty` }
  return { present: true, why: `${name} is set` }
}

/** Cursor takes CURSOR_API_KEY, or CURSOR_AUTH_TOKEN when CURSOR_API_KEY is not set at all. */
const cursorOffer = (env: Env): ProviderOffer => {
  const runs = `sessions run \`${env.PLANBRIDGE_CURSOR_COMMAND ?? "agent"} acp\``
  const offer = (offered: boolean, why: string): ProviderOffer => ({ provider: "cursor", offered, why })
  const apiKey = env.CURSOR_API_KEY
  if (apiKey === "") return offer(false, "CURSOR_API_KEY is empty (an empty one also hides CURSOR_AUTH_TOKEN)")
  if (apiKey !== undefined) return offer(true, `CURSOR_API_KEY is set; ${runs}`)
  const authToken = keyState(env, "CURSOR_AUTH_TOKEN")
  if (authToken.present) return offer(true, `${authToken.why}; ${runs}`)
  if (env.CURSOR_AUTH_TOKEN === "") return offer(false, authToken.why)
  return offer(false, "neither CURSOR_API_KEY nor CURSOR_AUTH_TOKEN is set")
}

/**
 * User mode: the installed programs, with the user's own login and configuration. Whether the
 * login works is the probe's answer (`planbridge providers`, `welcome`), not known here.
 */
const userOffers = (env: Env, installed: Installed): ReadonlyArray<ProviderOffer> => {
  const codexHome = env.CODEX_HOME || "~/.codex"
  const claudeHome = env.CLAUDE_CONFIG_DIR || "~/.claude"
  const offer = (provider: "codex" | "claude", present: boolean, why: string, missing: string): ProviderOffer =>
    present ? { provider, offered: true, why } : { provider, offered: false, why: `${missing} is not installed` }
  return [
    offer("codex", installed.codex, `your own Codex login and config (${codexHome})`, "@openai/codex"),
    offer(
      "claude",
      installed.claude,
      `your own Claude Code login and settings (${claudeHome})`,
      "@anthropic-ai/claude-agent-sdk"
    ),
    cursorOffer(env)
  ]
}

/** Which provider programs are installed (user mode lists exactly those). */
export interface Installed {
  readonly codex: boolean
  readonly claude: boolean
}

export const providerOffers = (
  env: Env,
  mode: "user" | "isolated" = "isolated",
  installed: Installed = { codex: true, claude: true }
): ReadonlyArray<ProviderOffer> => {
  if (mode === "user") return userOffers(env, installed)
  const codex = keyState(env, "OPENAI_API_KEY")
  const claude = keyState(env, "ANTHROPIC_API_KEY")
  const codexModel = env.PLANBRIDGE_CODEX_MODEL ?? "gpt-5.5"
  const codexTarget = `model ${codexModel} at ${env.PLANBRIDGE_CODEX_BASE_URL ?? "https://api.openai.com/v1"}`
  const checklist = env.PLANBRIDGE_CLAUDE_CHECKLIST || "tasks"
  const claudeTarget = `${env.PLANBRIDGE_CLAUDE_BASE_URL ?? "https://api.anthropic.com"}, checklist tools ${checklist}`
  const keyed = (provider: "codex" | "claude", key: typeof codex, target: string): ProviderOffer => ({
    provider,
    offered: key.present,
    why: key.present ? `${key.why}; ${target}` : key.why
  })
  return [keyed("codex", codex, codexTarget), keyed("claude", claude, claudeTarget), cursorOffer(env)]
}

/** The start-up lines: every provider, offered or not, with the reason. */
export const describeOffers = (offers: ReadonlyArray<ProviderOffer>): string => {
  const line = (o: ProviderOffer) => {
    const state = o.offered ? "offered" : "not offered"
    return `  ${o.provider.padEnd(7)} ${state.padEnd(12)} ${o.why}\n`
  }
  return `providers:\n${offers.map(line).join("")}`
}
