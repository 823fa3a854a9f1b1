import type { PromptId, RequestId } from "@planbridge/contracts"
import { Effect, Result, Schema } from "effect"
import { randomUUID } from "node:crypto"
import type { AdapterError } from "../AdapterError.ts"
import { replayError } from "./ReplayError.ts"

/**
 * Every id a session makes for the canonical events, one function a kind, for every provider,
 * its replay and startup recovery. All are `<scope>:<kind>:<key>`:
 *
 * - a scope is `<threadId>:<12 hex>` for a live session (`liveScope`: a fresh one per session,
 *   so a thread's later sessions never reuse an id whose counter restarted), or for a replay the
 *   scope its recording names (the meta line's `idPrefix`) else `<threadId>:r` (`replayScope`);
 * - event ids are `<scope>:event:<n>`, n counting from 1 (`eventIds` live, `replayIds` for a
 *   replay), so a replay of one recording has the same ids every time;
 * - request and prompt ids are `<scope>:request:<native>` / `<scope>:prompt:<native>`, the
 *   provider's native request key kept whole: the thread when that key is unique in the thread
 *   (Codex `<turnId>:<itemId>`, Claude tool-use ids), the session's scope when it is only unique
 *   in the process (ACP's JSON-RPC ids). The answer path finds the native request by this id in
 *   its open-request map (`OpenRequests.ts`), which keeps the native id the reply is sent to.
 *
 * Event ids are keys across the whole store (a known id is not ingested again), which the thread
 * id at the head of every scope guarantees; recovery's ids are derived from what they close
 * (`recoveryEventId`), so that two servers recovering the same work write one event.
 */

/** How many hex digits of a random UUID tell one live session of a thread from the others. */
const SESSION_TAG_HEX = 12

/** A live session's scope: `<threadId>:<12 hex>`, fresh for every session. */
export const liveScope = (threadId: string): string =>
  `${threadId}:${randomUUID().replaceAll("-", "").slice(0, SESSION_TAG_HEX)}`

/** A replay's own scope, when its recording names none: `<threadId>:r` (the replaying thread is new). */
export const replayScope = (threadId: string): string => `${threadId}:r`

const decodeRecordedScope = Schema.decodeUnknownResult(Schema.Struct({ idPrefix: Schema.optionalKey(Schema.String) }))

/** The n-th (from 0) event id of `scope`: `<scope>:event:<n + 1>`, live and replayed alike. */
const nthEventId = (scope: string, n: number): string => `${scope}:event:${n + 1}`

/** A live session's event ids in `scope`, in order: `<scope>:event:1`, `<scope>:event:2`, … */
export const eventIds = (scope: string): (() => string) => {
  let n = 0
  return () => nthEventId(scope, n++)
}

/**
 * A replay's ids: its scope, the one the recorded session used (the meta line's `idPrefix`, so
 * the replay reproduces the live ids) else `<threadId>:r`, and its n-th event's id. A meta line
 * whose `idPrefix` is not a string is refused.
 */
export const replayIds = (
  meta: unknown,
  threadId: string
): Effect.Effect<
  { readonly scope: string; readonly eventId: (at: { readonly n: number }) => string },
  AdapterError
> => {
  const recorded = decodeRecordedScope(meta)
  if (Result.isFailure(recorded))
    return Effect.fail(replayError(`the meta line's idPrefix: ${recorded.failure.message}`, 0))
  const scope = recorded.success.idPrefix ?? replayScope(threadId)
  return Effect.succeed({ scope, eventId: ({ n }) => nthEventId(scope, n) })
}

// Request and prompt ids are branded, not checked, here: a mapping step is pure and must not
// throw; the event that carries one is validated when it is stamped (`stampDraft`).

/** The canonical id of a native request (approval, question, elicitation): `<scope>:request:<native>`. */
export const requestIdOf = (scope: string, native: string): RequestId => `${scope}:request:${native}` as RequestId

/** The prompt a native request asks: `<scope>:prompt:<native>`. */
export const promptIdOf = (scope: string, native: string): PromptId => `${scope}:prompt:${native}` as PromptId

/** Startup recovery's event closing `key` (a prompt, request, turn or thread): `planbridge-recovery:<what>:<key>`. */
export const recoveryEventId = (what: "prompt" | "request" | "turn" | "thread", key: string): string =>
  `planbridge-recovery:${what}:${key}`
