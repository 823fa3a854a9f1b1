import type { ProviderAuth } from "@planbridge/contracts"
import { Effect, Schema } from "effect"
import { tmpdir } from "node:os"
import { dirname } from "node:path"
import { fileURLToPath } from "node:url"
import { authProbe } from "../kernel/authProbe.ts"
import { acquireProviderProcess, type ProviderProcess } from "../kernel/ProviderProcess.ts"
import { readLinesPaced } from "../inbound.ts"
import { makeLineSplitter } from "../lines.ts"
import { CLAUDE_ACCOUNT_PROGRAM } from "./ClaudeAccountProgram.ts"

/**
 * Whether the user's Claude Code is logged in, from the account information the CLI reports when
 * the SDK initializes it (CLI 2.1.333): a short-lived CLI that loads no settings (so no hook
 * runs and no MCP server starts), keeps no session on disk, and is closed as soon as it answered.
 * The SDK runs in a child Node process (ClaudeAccountProgram.ts), in one process group with the
 * CLI it starts: the server never loads it for a probe (idle RSS 30 MB lower).
 */

const CLAUDE_LOGIN_HINT = "run `claude /login` (or set CLAUDE_CODE_OAUTH_TOKEN from `claude setup-token`)"

/**
 * The fields we read of the CLI's `AccountInfo` (SDK 0.3.333), as the account program relays it;
 * `apiProvider` is any text: a backend a newer CLI adds is reported `unknown` by name, not refused.
 */
const OptionalText = Schema.optionalKey(Schema.String)
const ClaudeAccount = Schema.Struct({
  email: OptionalText,
  subscriptionType: OptionalText,
  tokenSource: OptionalText,
  apiKeySource: OptionalText,
  apiProvider: OptionalText
})
type ClaudeAccount = typeof ClaudeAccount.Type

/** What the account program writes (ClaudeAccountProgram.ts): the account, or why it could not. */
const AccountReply = Schema.fromJsonString(
  Schema.Union([Schema.Struct({ account: ClaudeAccount }), Schema.Struct({ error: Schema.String })])
)

/** Observed: an OAuth login from `.credentials.json` reports `subscriptionType` and no `tokenSource`. */
const authFromAccount = (account: ClaudeAccount): ProviderAuth => {
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

/** The account program's one line is small; anything longer is not its answer. */
const REPLY_LINE_BYTES = 64 * 1024

/** The first line the process writes, or a failure when it exits (or its stdout ends) without one. */
const firstLine = (probe: ProviderProcess): Effect.Effect<string, Error> =>
  Effect.callback<string, Error>((resume) => {
    const overBound = () => resume(Effect.fail(new Error("the account probe wrote a line over its bound")))
    readLinesPaced({
      stream: probe.child.stdout,
      splitter: makeLineSplitter(REPLY_LINE_BYTES, REPLY_LINE_BYTES),
      maxLineBytes: REPLY_LINE_BYTES,
      onTooLong: overBound,
      onLine: (line) =>
        line.bytes > REPLY_LINE_BYTES ? overBound() : resume(Effect.succeed(line.data.toString("utf8"))),
      onEnd: () => {
        const stderr = probe.stderrTail().trim().split("\n").pop() ?? ""
        resume(Effect.fail(new Error(`the account probe ended without an answer${stderr === "" ? "" : `: ${stderr}`}`)))
      }
    })
  })

export const probeClaudeAuth = (input: {
  readonly env: Readonly<Record<string, string>>
  readonly pathToClaudeCodeExecutable?: string
}): Effect.Effect<ProviderAuth> =>
  authProbe(
    "Claude Code did not say",
    Effect.gen(function* () {
      const probe = yield* acquireProviderProcess({
        command: process.execPath,
        args: ["--input-type=module", "-e", CLAUDE_ACCOUNT_PROGRAM],
        // The SDK passes `options.env` to the CLI and reads its own settings from this one.
        env: input.env,
        // Where Node finds this package's `node_modules` (and so the SDK) by walking up: beside this module.
        cwd: dirname(fileURLToPath(import.meta.url)),
        stderrLimit: 4000
      })
      // JSON leaves out an absent pathToClaudeCodeExecutable.
      probe.child.stdin.end(
        JSON.stringify({ env: input.env, cwd: tmpdir(), pathToClaudeCodeExecutable: input.pathToClaudeCodeExecutable })
      )
      const line = yield* firstLine(probe).pipe(
        Effect.timeoutOrElse({
          duration: 30_000,
          orElse: () => Effect.fail(new Error("Claude Code did not answer within the probe's bound"))
        })
      )
      const reply = yield* Schema.decodeUnknownEffect(AccountReply)(line)
      if ("error" in reply) return yield* Effect.fail(new Error(reply.error))
      return authFromAccount(reply.account)
    })
  )
