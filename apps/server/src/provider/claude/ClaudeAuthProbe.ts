import type { AccountInfo } from "@anthropic-ai/claude-agent-sdk"
import type { ProviderAuth } from "@planbridge/contracts"
import { Cause, Effect } from "effect"
import { tmpdir } from "node:os"
import { ProcessGroups } from "../ProcessGroups.ts"
import { makeClaudeProcess } from "./ClaudeProcess.ts"

/**
 * Whether the user's Claude Code is logged in, from the account information the CLI reports when
 * the SDK initializes it (CLI 2.1.332): a short-lived CLI that loads no settings (so no hook
 * runs and no MCP server starts), keeps no session on disk, and is closed as soon as it answered.
 * The SDK is imported only when a probe runs.
 */

export const CLAUDE_LOGIN_HINT = "run `claude /login` (or set CLAUDE_CODE_OAUTH_TOKEN from `claude setup-token`)"

/** Observed: an OAuth login from `.credentials.json` reports `subscriptionType` and no `tokenSource`. */
export const authFromAccount = (account: AccountInfo): ProviderAuth => {
  if (account.apiProvider !== undefined && account.apiProvider !== "firstParty") {
    return { status: "unknown", method: account.apiProvider, label: `authenticated by ${account.apiProvider}` }
  }
  const apiKey = account.apiKeySource
  if (apiKey !== undefined && apiKey !== "none") return { status: "authenticated", method: "apiKey", label: apiKey }
  const token = account.tokenSource
  const subscription = account.subscriptionType
  if ((token !== undefined && token !== "none") || subscription !== undefined) {
    const parts = [subscription, token, account.email].filter((x): x is string => x !== undefined && x !== "")
    return { status: "authenticated", method: "oauth", label: parts.length > 0 ? parts.join(", ") : "claude.ai" }
  }
  return { status: "unauthenticated", hint: CLAUDE_LOGIN_HINT }
}

/** A prompt stream that never yields: the CLI initializes and waits for a message that never comes. */
const silence: AsyncIterable<never> = { [Symbol.asyncIterator]: () => ({ next: () => new Promise<never>(() => {}) }) }

export const probeClaudeAuth = (input: {
  readonly env: Readonly<Record<string, string>>
  readonly pathToClaudeCodeExecutable?: string
  readonly timeoutMs?: number
}): Effect.Effect<ProviderAuth> =>
  Effect.gen(function* () {
    const { query } = yield* Effect.promise(() => import("@anthropic-ai/claude-agent-sdk"))
    const process = makeClaudeProcess(yield* ProcessGroups)
    const q = yield* Effect.acquireRelease(
      Effect.sync(() =>
        query({
          prompt: silence,
          options: {
            cwd: tmpdir(),
            settingSources: [],
            persistSession: false,
            env: { ...input.env },
            spawnClaudeCodeProcess: process.spawn,
            ...(input.pathToClaudeCodeExecutable === undefined
              ? {}
              : { pathToClaudeCodeExecutable: input.pathToClaudeCodeExecutable })
          }
        })
      ),
      (q) =>
        Effect.sync(() => {
          q.close()
          process.killGroup()
        })
    )
    const init = yield* Effect.tryPromise(() => q.initializationResult()).pipe(
      Effect.timeoutOrElse({
        duration: input.timeoutMs ?? 30_000,
        orElse: () => Effect.fail(new Error("Claude Code did not answer within the probe's bound"))
      })
    )
    return authFromAccount(init.account)
  }).pipe(
    Effect.scoped,
    Effect.catchCause((cause) => {
      const error = Cause.squash(cause)
      const message = (error instanceof Error ? error.message : String(error)).split("\n")[0]?.slice(0, 300)
      return Effect.succeed<ProviderAuth>({ status: "unknown", hint: `Claude Code did not say: ${message ?? ""}` })
    })
  )
