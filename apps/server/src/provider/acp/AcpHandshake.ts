import { Effect, Schema } from "effect"
import { AdapterError, failAdapter } from "../ProviderAdapter.ts"
import * as N from "./AcpNative.ts"
import type { AcpProfile } from "./AcpProfile.ts"

const CLIENT_INFO = { name: "planbridge", version: "0.1.0" }

/** Sends a request through the session's mapping and waits until its response is mapped. */
export type AcpCall = (method: string, params: unknown) => Effect.Effect<unknown, AdapterError>

/**
 * The ACP handshake up to the session: `initialize` (offering only what this client implements),
 * `authenticate` when the profile names a method the agent offers, the check that an agent
 * asked to resume can load sessions, then `session/new` (or `session/load`). The mapping
 * configures the session at the set-up reply's place in the stream: updates before it are
 * history, updates after it (a mode echo) apply to the configured session, as in a replay.
 */
export const openAcpSession = Effect.fn("acp.openAcpSession")(function* (setup: {
  readonly call: AcpCall
  readonly profile: AcpProfile
  readonly cwd: string
  readonly resumeNativeSessionId: string | undefined
}) {
  const { call, profile, cwd } = setup
  const initialize = yield* call("initialize", {
    protocolVersion: 1,
    // Only what this client implements: no file system, no terminals; form and URL elicitations.
    clientCapabilities: {
      fs: { readTextFile: false, writeTextFile: false },
      terminal: false,
      elicitation: { form: {}, url: {} }
    },
    clientInfo: CLIENT_INFO
  })
  const init = Schema.decodeUnknownOption(N.InitializeResponse)(initialize)
  if (init._tag === "None")
    return yield* failAdapter("protocol", `${profile.label}: initialize response did not decode`)
  const auth = profile.auth
  if (auth !== undefined && (init.value.authMethods ?? []).some((m) => m.id === auth.methodId)) {
    yield* call("authenticate", { methodId: auth.methodId }).pipe(
      Effect.mapError(
        (e) =>
          new AdapterError({ reason: "start_failed", message: `${profile.label} authentication failed: ${e.message}` })
      )
    )
  }
  const sessionId = setup.resumeNativeSessionId
  if (sessionId !== undefined && init.value.agentCapabilities?.loadSession !== true)
    return yield* failAdapter("unsupported", `${profile.label} cannot load sessions`)
  const meta = profile.sessionMeta === undefined ? {} : { _meta: profile.sessionMeta }
  yield* sessionId === undefined
    ? call("session/new", { cwd, mcpServers: [], ...meta })
    : call("session/load", { sessionId, cwd, mcpServers: [], ...meta })
})
