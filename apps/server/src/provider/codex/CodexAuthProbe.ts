import type { ProviderAuth } from "@planbridge/contracts"
import { Effect, Schema } from "effect"
import { authProbe } from "../kernel/authProbe.ts"
import { CODEX_INITIALIZE, makeCodexTransport } from "./CodexTransport.ts"

/**
 * Whether the user's Codex is logged in, asked of a short-lived `codex app-server` (0.171.0):
 * `account/read`, falling back to the legacy `getAuthStatus`, which answers offline even for a
 * ChatGPT login (`account/read` first runs a "workspace routing discovery" against chatgpt.com
 * that takes ~15 s to time out without the network). No thread starts, so no MCP server runs.
 */

const AccountRead = Schema.Struct({
  account: Schema.NullOr(
    Schema.Struct({
      type: Schema.String,
      email: Schema.optionalKey(Schema.NullOr(Schema.String)),
      planType: Schema.optionalKey(Schema.NullOr(Schema.String))
    })
  ),
  requiresOpenaiAuth: Schema.optionalKey(Schema.Boolean)
})
const AuthStatus = Schema.Struct({
  authMethod: Schema.NullOr(Schema.String),
  requiresOpenaiAuth: Schema.optionalKey(Schema.NullOr(Schema.Boolean))
})

const CODEX_LOGIN_HINT = "run `codex login` (or `codex login --with-api-key`), then reload"

/** How long `account/read` may take before `getAuthStatus` answers instead. */
const ACCOUNT_READ_MS = 5_000

const unauthenticated: ProviderAuth = { status: "unauthenticated", hint: CODEX_LOGIN_HINT }
const noLoginNeeded: ProviderAuth = {
  status: "authenticated",
  method: "modelProvider",
  label: "the configured model provider needs no OpenAI login"
}

/** The native method names as the rest of Planbridge spells them (`apikey` is `getAuthStatus`'s). */
const methodOf = (native: string): string => (native === "apikey" || native === "apiKey" ? "apiKey" : native)

const authFromAccount = (value: typeof AccountRead.Type): ProviderAuth => {
  const account = value.account
  if (account === null) return value.requiresOpenaiAuth === false ? noLoginNeeded : unauthenticated
  const method = methodOf(account.type)
  if (method === "chatgpt") {
    const who = [account.email, account.planType].filter((x): x is string => typeof x === "string" && x !== "")
    return { status: "authenticated", method, label: `ChatGPT${who.length > 0 ? ` (${who.join(", ")})` : ""}` }
  }
  return { status: "authenticated", method, label: method === "apiKey" ? "OpenAI API key" : account.type }
}

const authFromStatus = (value: typeof AuthStatus.Type): ProviderAuth => {
  if (value.authMethod === null) return value.requiresOpenaiAuth === false ? noLoginNeeded : unauthenticated
  const method = methodOf(value.authMethod)
  return { status: "authenticated", method, label: method === "chatgpt" ? "ChatGPT" : "OpenAI API key" }
}

export const probeCodexAuth = (
  launch: Pick<Parameters<typeof makeCodexTransport>[0], "command" | "args" | "env" | "cwd">
): Effect.Effect<ProviderAuth> =>
  authProbe(
    "the Codex app-server did not say",
    Effect.gen(function* () {
      const transport = yield* makeCodexTransport({ ...launch, requestTimeoutMs: 15_000 })
      // Lines are let go as read (a response completing its request), so the inbound queue never fills.
      yield* Effect.forkScoped(Effect.forever(Effect.map(transport.take, transport.mapped)))
      yield* transport.request("initialize", CODEX_INITIALIZE)
      yield* transport.write({ method: "initialized" })
      // First the answer that never waits on the network; the app-server handles requests in order.
      const status = yield* Effect.exit(
        transport
          .request("getAuthStatus", { includeToken: false })
          .pipe(Effect.flatMap(Schema.decodeUnknownEffect(AuthStatus)))
      )
      const account = yield* transport
        .request("account/read", {})
        .pipe(
          Effect.flatMap(Schema.decodeUnknownEffect(AccountRead)),
          Effect.timeoutOption(ACCOUNT_READ_MS),
          Effect.option
        )
      if (account._tag === "Some" && account.value._tag === "Some") return authFromAccount(account.value.value)
      if (status._tag === "Success") return authFromStatus(status.value)
      return yield* Effect.failCause(status.cause)
    })
  )
