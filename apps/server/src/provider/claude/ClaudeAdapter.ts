import { Effect } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ProcessGroups } from "../ProcessGroups.ts"
import { adapterFailure, type ProviderAdapter } from "../ProviderAdapter.ts"
import { claudeEnv, makeClaudeProcess } from "./ClaudeProcess.ts"
import { makeClaudeSession, type ClaudeSessionOptions } from "./ClaudeSession.ts"
import { claudeHomeFor, claudeUserEnv, type ClaudeCredentials } from "./ClaudeUserEnv.ts"

export type ClaudeAdapterOptions = ClaudeCredentials & ClaudeSessionOptions

/** A scratch `HOME` for an isolated session (settings, plans, session logs), removed with its scope. */
const scratchHome = Effect.acquireRelease(
  Effect.tryPromise({
    try: () => mkdtemp(join(tmpdir(), "planbridge-claude-home-")),
    catch: adapterFailure("start_failed", "cannot create a HOME for Claude")
  }),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

/**
 * The Claude Agent SDK adapter. An isolated session runs on a `HOME` of its own (the CLI keeps its
 * settings, plans and session logs there): the thread's directory the server keeps, or else a
 * scratch one removed when the session's scope closes. A user-mode session runs in the user's own
 * `HOME` and config dir, where its session log (what `resume` reads) is kept as Claude Code keeps it.
 */
export const makeClaudeAdapter = (options: ClaudeAdapterOptions): ProviderAdapter => ({
  provider: "claude",
  homeFor: (threadDir) => claudeHomeFor(options, threadDir),
  startSession: (input) =>
    Effect.gen(function* () {
      // User mode: the user's environment decides (setting CLAUDE_CONFIG_DIR, even to its default,
      // would change where the CLI looks for the login), and it loads the setting sources Claude
      // Code itself does.
      const launch =
        options.credentials === "user"
          ? { env: claudeUserEnv(options), settingSources: ["user", "project", "local"] as const }
          : {
              env: claudeEnv({
                ...options,
                home: input.home ?? (yield* scratchHome),
                apiKey: options.apiKey ?? "planbridge-local"
              })
            }
      return yield* makeClaudeSession(options, input, { ...launch, process: makeClaudeProcess(yield* ProcessGroups) })
    })
})
