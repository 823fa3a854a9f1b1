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
 * The events `stampDraft` decoded, so that ingestion takes them as they are instead of decoding
 * them a second time (issue 26: every event was decoded twice, at stamping and at ingestion).
 * An event is never changed in place after it is stamped: whoever changes one on its way to the
 * log (the server's stamps on `session.started`, a resolution's `resolvedBy`, a graceful stop)
 * makes a new object, which is not in this set and is decoded at ingestion as any other input.
 */
const decodedEvents = new WeakSet<object>()

/** True for an event `stampDraft` decoded (and nobody has replaced since). */
export const isDecodedEvent = (input: unknown): input is RuntimeEvent =>
  typeof input === "object" && input !== null && decodedEvents.has(input)

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
  if (Exit.isSuccess(decoded)) {
    decodedEvents.add(decoded.value)
    return decoded.value
  }
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
