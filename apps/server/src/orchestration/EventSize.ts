import type { EventId, ItemType, RawNative, RuntimeEvent, RuntimeEventOf, StreamKind } from "@planbridge/contracts"
import type { Schema } from "effect"
import { eventJsonBytes, eventJsonLength, eventJsonOf, type EventJson } from "../persistence/EventJson.ts"
import { definedFields } from "../util/definedFields.ts"
import { flatten, jsonHead, jsonUtf8Bytes } from "./JsonMeasure.ts"

/**
 * The bound on one canonical event: its JSON, in UTF-8 bytes. Every event is stored and sent
 * whole, so one huge event would cost its size several times over in memory and, at the
 * WebSocket's 16 MiB slow-client bound, close every subscriber at once. Ingestion brings every
 * event under it, losing no text:
 * - `raw.payload` (and an item's `data`) over the bound is replaced by a stub that keeps its
 *   size and its first 4 KiB (`{"planbridge.truncated": {bytes, head}}`);
 * - a long `content.delta` / `plan.proposed.delta` is split into several deltas of the same
 *   item or plan (ids `<eventId>#<n>` after the first);
 * - an item event with a long `text` becomes the same event carrying the first piece (which
 *   replaces the stream, as its text would have), the rest as `content.delta`s, and for
 *   `item.completed` the completion itself last, without `text` (so the streamed text stands);
 * - anything still over the bound (a plan or prompt of more than 1 MiB) is recorded as a
 *   `runtime.error` `event_too_large` naming its type and size, instead of the event.
 */
export const MAX_EVENT_BYTES = 1024 * 1024

/** Characters per piece of a split text: at most 3 bytes each in UTF-8 (4 for a pair of two). */
const PIECE_CHARS = 192 * 1024
const RAW_HEAD_CHARS = 4096

/**
 * A lower bound on the UTF-8 bytes of `JSON.stringify(value)`, without making it: every string's
 * UTF-16 units (each at least one byte) with its quotes, every key with its quotes and colon.
 * Counting stops past `limit`. A 20 MiB text is then known not to fit without serializing it:
 * each serialization of a huge event was a transient copy of its size, and several of them
 * (once to measure, again to bound, again per check) made the server's peak memory for one
 * 20 MiB line ~780 MB (issue 31, item 5).
 */
export const jsonBytesAtLeast = (value: unknown, limit: number): number => {
  let bytes = 0
  const visit = (u: unknown): void => {
    if (bytes > limit) return
    if (typeof u === "string") bytes += u.length + 2
    else if (typeof u === "number" || typeof u === "boolean" || u === null) bytes += 1
    else if (Array.isArray(u)) {
      bytes += 2
      for (const item of u) visit(item)
    } else if (typeof u === "object") {
      bytes += 2
      const members = u as Record<string, unknown>
      // A for…in walk allocates nothing; Object.entries made an array of pairs per object, 21 % of
      // ingestion's allocation (42 MB per 50k events, issue 32's ingest profile).
      for (const key in members) {
        if (!Object.hasOwn(members, key)) continue
        const item = members[key]
        // JSON.stringify leaves such members out.
        if (item === undefined || typeof item === "function" || typeof item === "symbol") continue
        bytes += key.length + 3
        visit(item)
      }
    }
  }
  visit(value)
  return bytes
}

/** Certainly over the bound, known without serializing the event. */
const surelyTooLarge = (value: unknown, bound: number) => jsonBytesAtLeast(value, bound) > bound

/** An event with the JSON the log stores, made once for the size check and the log. */
export interface SizedEvent {
  readonly event: RuntimeEvent
  readonly json: EventJson
}

/**
 * The event with its JSON, made flat at once. `JSON.stringify` returns a rope of the pieces it
 * wrote; the first reader that needs it whole (the SQLite binding, a frame) copies it flat, by
 * then its pieces have lived long enough to be promoted, and they stay in memory as garbage until
 * a full collection: one more transient copy of every big event (issue 31, item 5). Flattened
 * here, they die young.
 */
const sized = (event: RuntimeEvent): SizedEvent => {
  const json = eventJsonOf(event)
  flatten(json.event)
  if (json.raw !== null) flatten(json.raw)
  return { event, json }
}

/**
 * Whether an event fits, from the JSON the log will store (so ingestion serializes an event once);
 * a UTF-16 unit is at most 3 bytes of UTF-8, so most need no exact count.
 */
export const eventJsonFits = (json: EventJson): boolean =>
  eventJsonLength(json) * 3 <= MAX_EVENT_BYTES || eventJsonBytes(json) <= MAX_EVENT_BYTES

/** Splits text into pieces of at most PIECE_CHARS UTF-16 units, never inside a surrogate pair. */
const pieces = (text: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  let at = 0
  while (at < text.length) {
    let end = Math.min(at + PIECE_CHARS, text.length)
    const last = text.charCodeAt(end - 1)
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--
    out.push(text.slice(at, end))
    at = end
  }
  return out
}

/** The value's size and head, counted and cut without serializing it (JsonMeasure.ts). */
const stub = (value: Schema.Json): Schema.Json => ({
  "planbridge.truncated": { bytes: jsonUtf8Bytes(value), head: jsonHead(value, RAW_HEAD_CHARS) }
})

/** Whether a JSON value is over the head a stub keeps (never serialized past that head). */
const overHead = (value: Schema.Json): boolean =>
  surelyTooLarge(value, RAW_HEAD_CHARS) || jsonHead(value, RAW_HEAD_CHARS + 1).length > RAW_HEAD_CHARS

const withSmallRaw = (event: RuntimeEvent): RuntimeEvent => {
  const raw: RawNative | undefined = event.raw
  if (raw === undefined || !overHead(raw.payload)) return event
  return { ...event, raw: { ...raw, payload: stub(raw.payload) } }
}

const part = (event: RuntimeEvent, n: number) => `${event.eventId}#${n}` as EventId

const streamKindOf: Record<ItemType, StreamKind> = {
  user_message: "assistant_text",
  assistant_message: "assistant_text",
  reasoning: "reasoning_text",
  plan: "plan_text",
  tool_call: "tool_output",
  command: "tool_output",
  file_change: "tool_output",
  other: "tool_output"
}

type ItemEvent = RuntimeEventOf<"item.started" | "item.updated" | "item.completed">

const splitItem = (event: ItemEvent, text: string): ReadonlyArray<RuntimeEvent> => {
  const [first = "", ...rest] = pieces(text)
  const { raw: _raw, ...bare } = event
  const envelope = { provider: event.provider, threadId: event.threadId, turnId: event.turnId, itemId: event.itemId }
  const deltas = rest.map((delta, i): RuntimeEvent => ({
    ...envelope,
    type: "content.delta",
    eventId: part(event, i + 1),
    createdAt: event.createdAt,
    payload: { streamKind: streamKindOf[event.payload.itemType], delta }
  }))
  if (event.type !== "item.completed") return [{ ...event, payload: { ...event.payload, text: first } }, ...deltas]
  const { text: _text, ...completed } = event.payload
  return [
    {
      ...bare,
      type: "item.updated",
      eventId: part(event, 0),
      payload: { ...completed, status: "inProgress", text: first }
    },
    ...deltas,
    { ...event, payload: completed }
  ]
}

const splitDelta = (event: RuntimeEventOf<"content.delta" | "plan.proposed.delta">): ReadonlyArray<RuntimeEvent> =>
  pieces(event.payload.delta).map((delta, i) => {
    const payload = { ...event.payload, delta }
    if (i === 0) return { ...event, payload } as RuntimeEvent
    const { raw: _raw, ...bare } = event
    return { ...bare, eventId: part(event, i), payload } as RuntimeEvent
  })

const tooLarge = (event: RuntimeEvent, bytes: number): RuntimeEvent => ({
  type: "runtime.error",
  eventId: event.eventId,
  provider: event.provider,
  threadId: event.threadId,
  createdAt: event.createdAt,
  ...definedFields({ turnId: event.turnId }),
  payload: {
    code: "event_too_large",
    message: `a ${event.type} event of ${bytes} bytes exceeds the ${MAX_EVENT_BYTES}-byte bound and was not recorded`,
    fatal: false,
    detail: { type: event.type, bytes }
  }
})

/**
 * The event as pieces that each fit MAX_EVENT_BYTES (one piece: the event itself), each with its
 * JSON. An event that is certainly over the bound is never serialized whole.
 */
export const boundEventJson = (event: RuntimeEvent): ReadonlyArray<SizedEvent> => {
  if (!surelyTooLarge(event, MAX_EVENT_BYTES)) {
    const whole = sized(event)
    if (eventJsonFits(whole.json)) return [whole]
  }
  let smaller = withSmallRaw(event)
  if (
    (smaller.type === "item.started" || smaller.type === "item.updated" || smaller.type === "item.completed") &&
    smaller.payload.data !== undefined &&
    overHead(smaller.payload.data)
  ) {
    smaller = { ...smaller, payload: { ...smaller.payload, data: stub(smaller.payload.data) } }
  }
  if (!surelyTooLarge(smaller, MAX_EVENT_BYTES)) {
    const whole = sized(smaller)
    if (eventJsonFits(whole.json)) return [whole]
  }
  const split =
    smaller.type === "content.delta" || smaller.type === "plan.proposed.delta"
      ? splitDelta(smaller)
      : (smaller.type === "item.started" || smaller.type === "item.updated" || smaller.type === "item.completed") &&
          smaller.payload.text !== undefined
        ? splitItem(smaller, smaller.payload.text)
        : [smaller]
  return split.map((piece) => {
    const bounded = sized(piece)
    if (eventJsonFits(bounded.json)) return bounded
    return sized(tooLarge(piece, eventJsonBytes(bounded.json)))
  })
}

/** The event as pieces that each fit MAX_EVENT_BYTES (one piece: the event itself). */
export const boundEventSize = (event: RuntimeEvent): ReadonlyArray<RuntimeEvent> =>
  boundEventJson(event).map((piece) => piece.event)
