import { Effect, Schema } from "effect"
import { tmpdir } from "node:os"
import { AdapterError, failAdapter, type NativeSessionList } from "../ProviderAdapter.ts"
import { initializedBareAgent } from "./AcpHandshake.ts"
import type { AcpProfile } from "./AcpProfile.ts"
import { offers, resumable, takeUpWith } from "./AcpState.ts"
import { definedFields } from "../../util/definedFields.ts"

/** At most this many sessions are listed (the rest is `truncated`), over at most this many pages. */
export const LIST_MAX_SESSIONS = 500
export const LIST_MAX_PAGES = 20

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
    const { init, call } = yield* initializedBareAgent(profile, env, cwd ?? tmpdir())
    if (!offers(init, "list"))
      return yield* failAdapter(
        "unsupported",
        `${profile.label} does not list its sessions (it does not announce sessionCapabilities.list)`
      )
    if (!resumable(init))
      return yield* failAdapter("unsupported", `${profile.label} lists sessions but can neither resume nor load them`)
    const sessions: Array<NativeSessionList["sessions"][number]> = []
    let cursor: string | undefined
    for (let page = 0; page < LIST_MAX_PAGES; page++) {
      const reply = yield* call("session/list", definedFields({ cwd, cursor }))
      const decoded = Schema.decodeUnknownResult(ListPage)(reply)
      if (decoded._tag === "Failure")
        return yield* failAdapter("protocol", `${profile.label}: session/list reply: ${decoded.failure.message}`)
      for (const { title, updatedAt, ...s } of decoded.success.sessions)
        sessions.push({ ...s, ...definedFields({ title: title ?? undefined, updatedAt: updatedAt ?? undefined }) })
      cursor = decoded.success.nextCursor ?? undefined
      if (cursor === undefined || sessions.length >= LIST_MAX_SESSIONS) break
    }
    return {
      sessions: sessions.slice(0, LIST_MAX_SESSIONS),
      truncated: cursor !== undefined || sessions.length > LIST_MAX_SESSIONS,
      takeUpWith: takeUpWith(init)
    } as const
  }).pipe(Effect.scoped)
