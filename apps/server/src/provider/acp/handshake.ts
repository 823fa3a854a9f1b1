import { Deferred, Effect, Schema } from "effect"
import { AdapterError, failAdapter } from "../ProviderAdapter.ts"
import * as N from "./native.ts"
import type { EventDraft } from "../kernel/EventDraft.ts"
import type { Reply } from "./pending.ts"
import type { AcpProfile } from "./profile.ts"
import type { AcpTranslator } from "./translator.ts"
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
    yield* agent.request("authenticate", { methodId: auth.methodId }, { timeoutMs }).pipe(
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

/**
 * `session/new`, or `session/load` to resume, and the session configured from its reply — at the
 * reply's place in the stream: updates sent before it are history, updates after it (a mode
 * echo) apply to the configured session, as in a replay. Returns the agent's session id.
 */
export const openAgentSession = Effect.fn("acp.openAgentSession")(function* (setup: {
  readonly agent: AcpTransport
  readonly profile: AcpProfile
  readonly translator: AcpTranslator
  /** The raw `initialize` result. */
  readonly initialize: unknown
  readonly cwd: string
  readonly resumeNativeSessionId: string | undefined
  readonly timeoutMs: number
  /** Queues the configuring job (after `record`, the reply's place in the stream), then `done`. */
  readonly configure: (job: Effect.Effect<void, AdapterError>, record: () => void, done: Effect.Effect<void>) => void
  readonly emitFrom: (
    what: string,
    payload: unknown,
    f: () => ReadonlyArray<EventDraft>
  ) => Effect.Effect<void, AdapterError>
}) {
  const { agent, translator, cwd, timeoutMs } = setup
  const resumed = setup.resumeNativeSessionId !== undefined
  const configured = yield* Deferred.make<void>()
  const onSetup = (reply: Reply, record: () => void) => {
    const result = "result" in reply ? reply.result : undefined
    const withId =
      resumed && typeof result === "object" && result !== null
        ? { ...result, sessionId: setup.resumeNativeSessionId }
        : result
    const job =
      "result" in reply
        ? setup.emitFrom("configure", withId, () => translator.configure(setup.initialize, withId, { cwd, resumed }))
        : Effect.void
    setup.configure(job, record, Deferred.succeed(configured, undefined))
  }
  yield* resumed
    ? agent.request(
        "session/load",
        { sessionId: setup.resumeNativeSessionId, cwd, mcpServers: [] },
        { timeoutMs, onReply: onSetup }
      )
    : agent.request("session/new", { cwd, mcpServers: [] }, { timeoutMs, onReply: onSetup })
  yield* Deferred.await(configured)
  const sessionId = translator.nativeSessionId
  if (sessionId === undefined)
    return yield* failAdapter("protocol", `${setup.profile.label}: no sessionId in the session/new response`)
  return sessionId
})
