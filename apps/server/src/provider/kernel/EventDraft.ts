import {
  EventId,
  RuntimeEvent,
  type IsoDateTime,
  type ProviderKind,
  type RawNative,
  type ThreadId
} from "@planbridge/contracts"
import { Exit, Schema } from "effect"

type Envelope = "eventId" | "provider" | "threadId" | "createdAt"

/**
 * A canonical event before it is stamped: the mapping decides type, payload, turn, item and
 * raw; the session (live) or the replayer (from the transcript) supplies id and time.
 */
export type EventDraft = RuntimeEvent extends infer E ? (E extends RuntimeEvent ? Omit<E, Envelope> : never) : never

/** The envelope a draft gets when it is stamped. */
export interface Stamp {
  readonly provider: ProviderKind
  readonly threadId: ThreadId
  readonly eventId: string
  readonly createdAt: IsoDateTime | string
}

/** Native payloads come from `JSON.parse`, so they are JSON by construction. */
export const asJson = (value: unknown): Schema.Json => (value === undefined ? null : (value as Schema.Json))

/** The native message an event came from, kept on the event as it was. */
export const rawOf = (source: string, method: string | undefined, payload: unknown): RawNative =>
  method === undefined ? { source, payload: asJson(payload) } : { source, method, payload: asJson(payload) }

const decodeEvent = Schema.decodeUnknownExit(RuntimeEvent)

/**
 * Stamps and validates, for every provider. A draft that does not decode is a mapping bug; it
 * becomes a `runtime.error` carrying the schema message and the draft, so nothing is lost
 * silently and nothing invalid reaches the event log.
 */
export const stampDraft = (draft: EventDraft, stamp: Stamp): RuntimeEvent => {
  const candidate = {
    ...draft,
    eventId: stamp.eventId,
    provider: stamp.provider,
    threadId: stamp.threadId,
    createdAt: stamp.createdAt
  }
  const decoded = decodeEvent(candidate)
  if (Exit.isSuccess(decoded)) return decoded.value
  const message = String(decoded.cause)
  return {
    type: "runtime.error",
    eventId: EventId.make(stamp.eventId),
    provider: stamp.provider,
    threadId: stamp.threadId,
    createdAt: stamp.createdAt as IsoDateTime,
    raw: draft.raw ?? { source: "planbridge", payload: null },
    payload: { code: "mapping_invalid", message, fatal: false, detail: asJson(JSON.parse(JSON.stringify(draft))) }
  }
}

/** A `runtime.warning` draft: something native we could not use, said once, with its raw form. */
export const warningDraft = (code: string, message: string, raw: RawNative, detail?: unknown): EventDraft =>
  detail === undefined
    ? { type: "runtime.warning", raw, payload: { code, message } }
    : { type: "runtime.warning", raw, payload: { code, message, detail: asJson(detail) } }
