import { adapterError } from "../AdapterError.ts"

/**
 * Whose credentials a provider session runs with. The one decision both launch paths consult
 * (Codex's home, Claude's environment, the ACP agents' environment), so that they never disagree.
 *   user     — the user's own logged-in CLIs: their HOME, CODEX_HOME, CLAUDE_CONFIG_DIR, settings
 *              and MCP servers. Planbridge never writes into those homes.
 *   isolated — a scratch home per session and credentials from Planbridge's own variables
 *              (OPENAI_API_KEY, ANTHROPIC_API_KEY): tests, CI, shared deployments.
 */
export type CredentialsMode = "user" | "isolated"

export const CREDENTIALS_MODES: ReadonlyArray<CredentialsMode> = ["user", "isolated"]

/** The variables that point a provider at another model endpoint; any of them implies `isolated`. */
export const BASE_URL_VARIABLES = ["PLANBRIDGE_CODEX_BASE_URL", "PLANBRIDGE_CLAUDE_BASE_URL"] as const

export interface CredentialsChoice {
  readonly mode: CredentialsMode
  /** Why this mode, for the start-up output. */
  readonly why: string
}

type Env = Readonly<Record<string, string | undefined>>

const parse = (value: string, source: string): CredentialsMode => {
  if (value === "user" || value === "isolated") return value
  // A `--credentials` or `PLANBRIDGE_CREDENTIALS` value that is neither `user` nor `isolated`.
  throw adapterError("invalid_config", `${source} must be 'user' or 'isolated', not '${value}'`)
}

/**
 * The flag wins, then `PLANBRIDGE_CREDENTIALS`; without either, a `PLANBRIDGE_*_BASE_URL` means
 * a deployment that brings its own model endpoint (isolated), and a loopback server is the
 * user's own machine (user). A server reachable from elsewhere must not lend the user's logins.
 */
export const chooseCredentialsMode = (input: {
  readonly flag?: string | undefined
  readonly env: Env
  readonly loopback: boolean
}): CredentialsChoice => {
  if (input.flag !== undefined) return { mode: parse(input.flag, "--credentials"), why: "--credentials" }
  const fromEnv = input.env.PLANBRIDGE_CREDENTIALS
  if (fromEnv !== undefined && fromEnv !== "") {
    return { mode: parse(fromEnv, "PLANBRIDGE_CREDENTIALS"), why: "PLANBRIDGE_CREDENTIALS" }
  }
  const baseUrl = BASE_URL_VARIABLES.find((name) => (input.env[name] ?? "") !== "")
  if (baseUrl !== undefined) return { mode: "isolated", why: `${baseUrl} is set` }
  return input.loopback
    ? { mode: "user", why: "the default on loopback" }
    : { mode: "isolated", why: "the default off loopback" }
}
