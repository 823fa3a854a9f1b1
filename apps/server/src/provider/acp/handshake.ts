import { Effect, Schema } from "effect"
import { AdapterError, failAdapter } from "../ProviderAdapter.ts"
import * as N from "./native.ts"
import type { AcpProfile } from "./profile.ts"
import type { AcpTransport } from "./transportContract.ts"

const CLIENT_INFO = { name: "planbridge", version: "0.1.0" }

/**
 * The ACP handshake up to the session: `initialize` (offering only what this client implements),
 * `authenticate` when the profile names a method the agent offers, and the check that an agent
 * asked to resume can load sessions. Returns the raw `initialize` result (the translator reads it).
 */
export const initializeAgent = Effect.fn("acp.initializeAgent")(function* (
  agent: AcpTransport,
  profile: AcpProfile,
  timeoutMs: number,
  resuming: boolean
) {
  const initialize = yield* agent.request(
    "initialize",
    {
      protocolVersion: 1,
      // Only what this client implements: no file system, no terminals; form elicitations.
      clientCapabilities: {
        fs: { readTextFile: false, writeTextFile: false },
        terminal: false,
        elicitation: { form: {} }
      },
      clientInfo: CLIENT_INFO
    },
    { timeoutMs }
  )
  const init = Schema.decodeUnknownOption(N.InitializeResponse)(initialize)
  if (init._tag === "None")
    return yield* failAdapter("protocol", `${profile.label}: initialize response did not decode`)
  const auth = profile.auth
  if (auth !== undefined && (init.value.authMethods ?? []).some((m) => m.id === auth.methodId)) {
    yield* agent
      .request("authenticate", { methodId: auth.methodId }, { timeoutMs })
      .pipe(
        Effect.mapError(
          (e) =>
            new AdapterError({
              reason: "start_failed",
              message: `${profile.label} authentication failed: ${e.message}`
            })
        )
      )
  }
  if (resuming && init.value.agentCapabilities?.loadSession !== true) {
    return yield* failAdapter("unsupported", `${profile.label} cannot load sessions`)
  }
  return initialize
})
