import { Effect, type Scope } from "effect"
import { createRequire } from "node:module"
import { homedir } from "node:os"
import { dirname, join } from "node:path"
import { prepareCodexHome, type CodexModelProvider } from "./CodexHome.ts"

/**
 * How a `codex app-server` is launched for one session, by credentials mode (see
 * `credentials/CredentialsMode.ts`):
 *   isolated — a scratch CODEX_HOME whose `config.toml` names our model provider, the key in its
 *              `env_key` variable, and only a few inherited variables;
 *   user     — the user's environment and CODEX_HOME (default `~/.codex`), untouched: what
 *              Planbridge needs goes in as `-c key=value` overrides, which the app-server keeps in
 *              a `sessionFlags` layer of its own (0.171.0), above the user's `config.toml`.
 */

export type CodexCredentials =
  | (CodexModelProvider & {
      readonly credentials?: "isolated"
      readonly apiKey: string
      /** Used when the server passes no home; defaults to a fresh temporary directory per session. */
      readonly codexHome?: string
    })
  | {
      readonly credentials: "user"
      /** The user's environment (parent-session variables already stripped), CODEX_HOME included if set. */
      readonly userEnv: Readonly<Record<string, string>>
      /** Overrides the user's configured model when set. */
      readonly model?: string
    }

export interface CodexLaunch {
  readonly env: Record<string, string>
  /** Appended to `codex app-server`. */
  readonly args: ReadonlyArray<string>
  /** The model a turn asks for when the thread did not report one. */
  readonly model: string | undefined
}

/**
 * Planbridge's needs as `-c` overrides: questions outside Plan mode, the checklist tool (off by
 * default), no warning about them on stderr. Values are TOML.
 */
const CODEX_USER_OVERRIDES = [
  "features.default_mode_request_user_input=true",
  "tools.update_plan.enabled=true",
  "suppress_unstable_features_warning=true"
] as const

/**
 * What the isolated app-server inherits: enough for the commands it runs on the user's behalf
 * (their HOME, shell, locale), but no other credentials; its own state lives in the scratch home.
 */
const INHERITED = ["PATH", "HOME", "USER", "SHELL", "LANG", "LC_ALL", "TMPDIR", "TERM"] as const
const inheritedEnv = (): Record<string, string> =>
  Object.fromEntries(INHERITED.flatMap((name) => (process.env[name] !== undefined ? [[name, process.env[name]]] : [])))

/** The `-c` flags of a user-mode launch. */
export const codexUserArgs = (model: string | undefined): ReadonlyArray<string> => [
  ...CODEX_USER_OVERRIDES.flatMap((override) => ["-c", override]),
  ...(model === undefined ? [] : ["-c", `model=${JSON.stringify(model)}`])
]

/**
 * The CODEX_HOME a session of a thread runs on, recorded with the thread for `thread/resume`:
 * isolated, the thread's directory under the data dir; user, the user's own (`CODEX_HOME`, else
 * `~/.codex`).
 */
export const codexHomeFor = (options: CodexCredentials, threadDir: string): string =>
  options.credentials === "user"
    ? (options.userEnv.CODEX_HOME ?? join(options.userEnv.HOME ?? homedir(), ".codex"))
    : threadDir

/**
 * `home`: the CODEX_HOME recorded for the thread (see `codexHomeFor`); a resumed user-mode
 * session runs on the home its rollout is in, even if the user's CODEX_HOME changed since.
 */
export const codexLaunch = (
  options: CodexCredentials,
  extraEnv: Readonly<Record<string, string>> = {},
  home?: string
): Effect.Effect<CodexLaunch, Error, Scope.Scope> => {
  if (options.credentials === "user") {
    return Effect.succeed({
      env: { ...options.userEnv, ...extraEnv, ...(home === undefined ? {} : { CODEX_HOME: home }) },
      args: codexUserArgs(options.model),
      model: options.model
    })
  }
  return Effect.map(prepareCodexHome(options, home ?? options.codexHome), (dir) => ({
    env: { ...inheritedEnv(), ...extraEnv, CODEX_HOME: dir, [options.envKey]: options.apiKey },
    args: [],
    model: options.model
  }))
}

/** The installed `@openai/codex` run by this Node binary: `codex app-server`. */
export const codexCommand = (): { readonly command: string; readonly args: ReadonlyArray<string> } => {
  const require = createRequire(import.meta.url)
  const script = join(dirname(require.resolve("@openai/codex/package.json")), "bin", "codex.js")
  return { command: process.execPath, args: [script, "app-server"] }
}

/** Whether `@openai/codex` is installed (a provider whose program is missing is not listed). */
export const codexInstalled = (): boolean => {
  try {
    codexCommand()
    return true
  } catch {
    return false
  }
}
