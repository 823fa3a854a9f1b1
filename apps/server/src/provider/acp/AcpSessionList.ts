import { Effect, Schema } from "effect"
import { tmpdir } from "node:os"
import { AdapterError, adapterError, failAdapter, type NativeSessionList } from "../ProviderAdapter.ts"
import * as N from "./AcpNative.ts"
import type { AcpProfile } from "./AcpProfile.ts"
import { offersList, offersResume, resumable } from "./AcpState.ts"
import { makeAcpTransport } from "./AcpTransport.ts"

/** At most this many sessions are listed (the rest is `truncated`), over at most this many pages. */
export const LIST_MAX_SESSIONS = 500
export const LIST_MAX_PAGES = 20
/** Each request of the listing (initialize, a page) must be answered within this. */
const LIST_REQUEST_TIMEOUT = "30 seconds"

/** ACP `SessionInfo` as far as Planbridge reads it; other fields are ignored. */
const SessionInfo = Schema.Struct({
  sessionId: Schema.String,
  cwd: Schema.String,
  title: Schema.optionalKey(Schema.NullOr(Schema.String)),
  updatedAt: Schema.optionalKey(Schema.NullOr(Schema.String))
})
const ListPage = Schema.Struct({
  sessions: Schema.Array(SessionInfo),
  nextCursor: Schema.optionalKey(Schema.NullOr(Schema.String))
})

/**
 * The agent's own sessions (ACP `session/list`, where `sessionCapabilities.list` is announced),
 * from a short-lived agent process on the adapter's environment: `initialize`, then pages of
 * `session/list` (optionally filtered by `cwd`) until the agent has no `nextCursor` or a bound
 * is reached. No session is created. An agent that does not announce listing, or that cannot
 * take a session up afterwards (neither `session/resume` nor `session/load`), is `unsupported`.
 */
export const listAcpSessions = (
  profile: AcpProfile,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string | undefined
): Effect.Effect<NativeSessionList, AdapterError> =>
  Effect.gen(function* () {
    const agent = yield* makeAcpTransport({
      command: profile.command,
      args: profile.args,
      cwd: cwd ?? tmpdir(),
      env
    })
    // Nothing is mapped here: every line is let go at once, a response completing its request.
    yield* Effect.forkScoped(Effect.forever(Effect.map(agent.take, agent.mapped)))
    const call = (method: string, params: unknown) =>
      agent.request(method, params).pipe(
        Effect.mapError((e) =>
          adapterError("protocol", `${profile.label}: ${method} failed: ${e.message}`, { cause: e })
        ),
        Effect.timeoutOrElse({
          duration: LIST_REQUEST_TIMEOUT,
          orElse: () => failAdapter("timeout", `${profile.label}: ${method}: no answer within ${LIST_REQUEST_TIMEOUT}`)
        })
      )
    const initialize = yield* call("initialize", {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: "planbridge", version: "0.1.0" }
    })
    const init = Schema.decodeUnknownOption(N.InitializeResponse)(initialize)
    if (init._tag === "None")
      return yield* failAdapter("protocol", `${profile.label}: initialize response did not decode`)
    if (!offersList(init.value))
      return yield* failAdapter(
        "unsupported",
        `${profile.label} does not list its sessions (it does not announce sessionCapabilities.list)`
      )
    if (!resumable(init.value))
      return yield* failAdapter("unsupported", `${profile.label} lists sessions but can neither resume nor load them`)
    const sessions: Array<NativeSessionList["sessions"][number]> = []
    let cursor: string | undefined
    for (let page = 0; page < LIST_MAX_PAGES; page++) {
      const reply = yield* call("session/list", {
        ...(cwd === undefined ? {} : { cwd }),
        ...(cursor === undefined ? {} : { cursor })
      })
      const decoded = Schema.decodeUnknownResult(ListPage)(reply)
      if (decoded._tag === "Failure")
        return yield* failAdapter("protocol", `${profile.label}: session/list reply: ${decoded.failure.message}`)
      for (const s of decoded.success.sessions)
        sessions.push({
          sessionId: s.sessionId,
          cwd: s.cwd,
          ...(s.title == null ? {} : { title: s.title }),
          ...(s.updatedAt == null ? {} : { updatedAt: s.updatedAt })
        })
      cursor = decoded.success.nextCursor ?? undefined
      if (cursor === undefined || sessions.length >= LIST_MAX_SESSIONS) break
    }
    return {
      sessions: sessions.slice(0, LIST_MAX_SESSIONS),
      truncated: cursor !== undefined || sessions.length > LIST_MAX_SESSIONS,
      takeUpWith: offersResume(init.value) ? "session/resume" : "session/load"
    } as const
  }).pipe(Effect.scoped)
