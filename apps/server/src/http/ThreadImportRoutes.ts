import { OperatingMode, type ProviderKind } from "@planbridge/contracts"
import { Effect, Schema } from "effect"
import type { FastifyInstance } from "fastify"
import { isAbsolute } from "node:path"
import { commandError } from "../orchestration/CommandErrors.ts"
import { ProviderRegistry } from "../orchestration/ProviderRegistry.ts"
import { SessionManager } from "../orchestration/SessionManager.ts"
import type { AdapterError } from "../provider/ProviderAdapter.ts"
import type { OperatorReply } from "./OperatorRoutes.ts"

const AbsolutePath = Schema.String.check(Schema.makeFilter((s: string) => isAbsolute(s) || "an absolute path"))
const SessionsQuery = Schema.Struct({ cwd: Schema.optionalKey(AbsolutePath) })
const ImportBody = Schema.Struct({
  provider: Schema.String.check(Schema.isNonEmpty()),
  nativeSessionId: Schema.String.check(Schema.isNonEmpty()),
  mode: Schema.optionalKey(OperatingMode)
})

const decodeOr = <S extends Schema.Codec<unknown, unknown>>(schema: S, input: unknown) =>
  Schema.decodeUnknownEffect(schema)(input ?? {}).pipe(Effect.mapError((e) => commandError("invalid_frame", e.message)))

/**
 * The provider's own sessions, by its adapter's `listSessions` (ACP `session/list`): typed
 * refusals with the path of what was wrong, `unknown_provider` and `unsupported` on `provider`.
 */
const listOf = (provider: string, cwd: string | undefined) =>
  Effect.gen(function* () {
    const registered = (yield* ProviderRegistry).get(provider as ProviderKind)
    if (registered === undefined)
      return yield* Effect.fail(
        commandError("unknown_provider", `no provider '${provider}' is configured on this server`, ["provider"])
      )
    const list = registered.adapter.listSessions
    if (list === undefined)
      return yield* Effect.fail(
        commandError("unsupported", `provider '${provider}' cannot list its own sessions`, ["provider"])
      )
    return yield* list(cwd).pipe(
      Effect.mapError((e: AdapterError) =>
        e.reason._tag === "Unsupported"
          ? commandError("unsupported", e.message, ["provider"], { cause: e })
          : commandError("provider_error", `cannot list the sessions of '${provider}': ${e.message}`, undefined, {
              cause: e
            })
      )
    )
  })

/**
 * `planbridge threads import` over the operator API (token-checked like every `/api` route):
 * `GET /api/providers/:provider/sessions` lists what the agent keeps; `POST /api/threads/import`
 * starts a new thread whose session takes one of them up (ACP `session/resume` where offered:
 * no history replayed; else `session/load`, whose replay is counted, not re-emitted). The
 * session id must be one the agent lists; its listed `cwd` becomes the thread's.
 */
export const registerThreadImportRoutes = (app: FastifyInstance, reply: OperatorReply): void => {
  app.get<{ Params: { provider: string } }>("/api/providers/:provider/sessions", (req, res) =>
    reply(
      res,
      Effect.gen(function* () {
        const { cwd } = yield* decodeOr(SessionsQuery, req.query)
        const found = yield* listOf(req.params.provider, cwd)
        return { provider: req.params.provider, ...found }
      })
    )
  )

  app.post("/api/threads/import", (req, res) =>
    reply(
      res,
      Effect.gen(function* () {
        const body = yield* decodeOr(ImportBody, req.body)
        const found = yield* listOf(body.provider, undefined)
        const session = found.sessions.find((s) => s.sessionId === body.nativeSessionId)
        if (session === undefined) {
          const more = found.truncated ? " (the listing was truncated; the session may be older)" : ""
          const message = `provider '${body.provider}' lists no session '${body.nativeSessionId}'${more}`
          return yield* Effect.fail(commandError("invalid_frame", message, ["nativeSessionId"]))
        }
        const sessions = yield* SessionManager
        const { threadId } = yield* sessions.startSession({
          provider: body.provider as ProviderKind,
          cwd: session.cwd,
          mode: body.mode ?? "default",
          resumeNativeSessionId: session.sessionId
        })
        return { threadId, nativeSessionId: session.sessionId, cwd: session.cwd, takeUpWith: found.takeUpWith }
      })
    )
  )
}
