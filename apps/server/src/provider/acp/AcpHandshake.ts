import { Effect, Schema, type Scope } from "effect"
import { AdapterError, adapterError, failAdapter } from "../ProviderAdapter.ts"
import * as N from "./AcpNative.ts"
import { profileForAgent, type AcpProfile } from "./AcpProfile.ts"
import { resumable, takeUpWith } from "./AcpState.ts"
import { makeAcpTransport } from "./AcpTransport.ts"

const CLIENT_INFO = { name: "planbridge", version: "0.1.0" }
/** What every client of ours offers: no file system, no terminals. */
const BARE_CAPABILITIES = { fs: { readTextFile: false, writeTextFile: false }, terminal: false }
/**
 * What a session's client offers, only what it implements: beside the bare offer, form and URL
 * elicitations, and plans as `plan_update` / `plan_removed` (ACP's unstable `plan` capability).
 */
const SESSION_CAPABILITIES = { ...BARE_CAPABILITIES, elicitation: { form: {}, url: {} }, plan: {} }

/** Sends a request through the session's mapping and waits until its response is mapped. */
type AcpCall = (method: string, params: unknown) => Effect.Effect<unknown, AdapterError>

/** `initialize`, offering `clientCapabilities`: the agent's answer, decoded. */
const initialize = (call: AcpCall, label: string, clientCapabilities: object) =>
  Effect.flatMap(call("initialize", { protocolVersion: 1, clientCapabilities, clientInfo: CLIENT_INFO }), (response) =>
    Effect.mapError(Schema.decodeUnknownEffect(N.InitializeResponse)(response), () =>
      adapterError("protocol", `${label}: initialize response did not decode`)
    )
  )

/**
 * The ACP handshake up to the session: `initialize` (offering only what this client implements),
 * `authenticate` when the profile names a method the agent offers, the check that an agent
 * asked to resume can take a session up, then `session/new` (or `session/resume` where the agent
 * offers it, `session/load` otherwise). The mapping
 * configures the session at the set-up reply's place in the stream: updates before it are
 * history, updates after it (a mode echo) apply to the configured session, as in a replay.
 */
export const openAcpSession = Effect.fn("acp.openAcpSession")(function* (setup: {
  readonly call: AcpCall
  readonly profile: AcpProfile
  readonly cwd: string
  readonly resumeNativeSessionId: string | undefined
}) {
  const { call, profile: base, cwd } = setup
  const init = yield* initialize(call, base.label, SESSION_CAPABILITIES)
  // What the agent announced picks the profile's variant (the mapping does the same).
  const profile = profileForAgent(base, init.agentInfo?.name ?? undefined)
  const auth = profile.auth
  if (auth !== undefined && (init.authMethods ?? []).some((m) => m.id === auth.methodId)) {
    yield* call("authenticate", { methodId: auth.methodId }).pipe(
      Effect.mapError((e) => adapterError("start_failed", `${profile.label} authentication failed: ${e.message}`))
    )
  }
  const sessionId = setup.resumeNativeSessionId
  const meta = profile.sessionMeta === undefined ? {} : { _meta: profile.sessionMeta }
  if (sessionId === undefined) return yield* call("session/new", { cwd, mcpServers: [], ...meta })
  if (!resumable(init)) return yield* failAdapter("unsupported", `${profile.label} cannot load sessions`)
  // session/resume takes the session up without replaying its history; session/load replays it.
  return yield* call(takeUpWith(init), { sessionId, cwd, mcpServers: [], ...meta })
})

/** Each request to a bare agent (initialize, a page of a listing) must be answered within this. */
const BARE_REQUEST_TIMEOUT = "30 seconds"

/**
 * A short-lived agent process whose lines nobody maps (the auth probe, a session listing): every
 * line is let go at once, a response completing its request, so nothing is recorded. Initialized
 * with no capabilities beyond the protocol's; `call` fails typed, after `BARE_REQUEST_TIMEOUT`.
 */
export const initializedBareAgent = (
  profile: AcpProfile,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string
): Effect.Effect<{ readonly init: N.InitializeResponse; readonly call: AcpCall }, AdapterError, Scope.Scope> =>
  Effect.gen(function* () {
    const agent = yield* makeAcpTransport({ command: profile.command, args: profile.args, cwd, env })
    yield* Effect.forkScoped(Effect.forever(Effect.map(agent.take, agent.mapped)))
    const call: AcpCall = (method, params) =>
      agent.request(method, params).pipe(
        Effect.mapError((e) =>
          adapterError("protocol", `${profile.label}: ${method} failed: ${e.message}`, { cause: e })
        ),
        Effect.timeoutOrElse({
          duration: BARE_REQUEST_TIMEOUT,
          orElse: () => failAdapter("timeout", `${profile.label}: ${method}: no answer within ${BARE_REQUEST_TIMEOUT}`)
        })
      )
    return { init: yield* initialize(call, profile.label, BARE_CAPABILITIES), call }
  })
