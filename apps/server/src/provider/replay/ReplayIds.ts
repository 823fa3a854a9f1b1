import { RuntimeEvent, type ThreadId } from "@planbridge/contracts"
import { Effect, Exit, Schema } from "effect"
import { adapterFailure, type AdapterError } from "../ProviderAdapter.ts"

/** The ids the store keys across threads: every session of one recording needs its own. */
const SERVER_WIDE_IDS = new Set(["promptId", "requestId", "planId"])

const decodeEvent = Schema.decodeUnknownExit(RuntimeEvent)

/** `value` with every server-wide id under it made the thread's own (`<thread>/<id>`). */
const rewrite = (value: unknown, own: (id: string) => string): unknown => {
  if (Array.isArray(value)) return value.map((v) => rewrite(v, own))
  if (value === null || typeof value !== "object") return value
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [
      key,
      SERVER_WIDE_IDS.has(key) && typeof v === "string" ? own(v) : rewrite(v, own)
    ])
  )
}

/**
 * A recording's events with prompt, request and plan ids of the session's thread. The replay
 * mappings derive prompt and request ids from the thread already (`kernel/ids.ts`), but Codex's
 * plan ids are its native `<turnId>-plan`, the same in every replay of a recording: two sessions
 * of it on one server would collide. `raw` (the native message) is left as recorded.
 */
export const withThreadIds = (
  events: ReadonlyArray<RuntimeEvent>,
  threadId: ThreadId
): Effect.Effect<ReadonlyArray<RuntimeEvent>, AdapterError> => {
  const own = (id: string) => (id.startsWith(threadId) ? id : `${threadId}/${id}`)
  return Effect.forEach(events, (event) => {
    const decoded = decodeEvent({ ...event, payload: rewrite(event.payload, own) })
    return Exit.isSuccess(decoded)
      ? Effect.succeed(decoded.value)
      : Effect.fail(adapterFailure("start_failed", event.type)(decoded.cause))
  })
}
