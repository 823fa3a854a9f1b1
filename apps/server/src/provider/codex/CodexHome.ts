import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Scope } from "effect"

/**
 * An isolated `CODEX_HOME`, so that nothing from the user's own Codex setup (auth, plugins,
 * history) leaks in and nothing we do leaks out: the thread's directory under the data dir that
 * the server keeps for resuming (`StartSessionInput.home`), or else a temporary one per session.
 * The model provider comes from the adapter options (tests point it at a loopback mock).
 */

export interface CodexModelProvider {
  /** Model slug sent to the provider, e.g. `gpt-5.5`. */
  readonly model: string
  /** Responses-API base URL, e.g. `http://127.0.0.1:PORT/v1`. */
  readonly baseUrl: string
  /** Name of the environment variable that carries the API key. */
  readonly envKey: string
  /** Provider id in `config.toml`. */
  readonly providerId?: string
}

const str = (value: string) => JSON.stringify(value)

/**
 * `plugins = false` stops the plugin sync that otherwise contacts the vendor at start-up;
 * `shell_snapshot = false`: Codex would otherwise save the login shell's environment under the
 * home, our API key variable included, and the home is kept in the data dir for resuming;
 * `default_mode_request_user_input` lets the model ask questions outside Plan mode;
 * `tools.update_plan` turns the checklist tool on (off by default); retries are off so a dead
 * model endpoint fails the turn at once instead of hanging it.
 */
export const codexConfigToml = (provider: CodexModelProvider): string => {
  const id = provider.providerId ?? "planbridge"
  return [
    `model = ${str(provider.model)}`,
    `model_provider = ${str(id)}`,
    `suppress_unstable_features_warning = true`,
    ``,
    `[model_providers.${id}]`,
    `name = ${str(id)}`,
    `base_url = ${str(provider.baseUrl)}`,
    `wire_api = "responses"`,
    `env_key = ${str(provider.envKey)}`,
    `request_max_retries = 0`,
    `stream_max_retries = 0`,
    ``,
    `[features]`,
    `plugins = false`,
    `shell_snapshot = false`,
    `default_mode_request_user_input = true`,
    ``,
    `[tools.update_plan]`,
    `enabled = true`,
    ``
  ].join("\n")
}

const io = <A>(run: () => Promise<A>) => Effect.tryPromise({ try: run, catch: (e) => new Error(String(e)) })

/** Writes `config.toml` into `dir`, or into a fresh temporary directory removed when the Scope closes. */
export const prepareCodexHome = (
  provider: CodexModelProvider,
  dir?: string
): Effect.Effect<string, Error, Scope.Scope> =>
  Effect.gen(function* () {
    const home =
      dir ??
      (yield* Effect.acquireRelease(
        io(() => mkdtemp(join(tmpdir(), "planbridge-codex-"))),
        (path) => Effect.promise(() => rm(path, { recursive: true, force: true }))
      ))
    yield* io(() => writeFile(join(home, "config.toml"), codexConfigToml(provider), { mode: 0o600 }))
    return home
  })
