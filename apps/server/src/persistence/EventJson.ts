import type { RuntimeEvent } from "@planbridge/contracts"

/**
 * An event as the log stores it: the canonical event without `raw` as JSON, and `raw` as JSON on
 * its own (null when the event has none). Ingestion serializes each event once, measures its size
 * from this (EventSize.ts) and hands it to the store with the event, which writes it as it is:
 * the size check and the log no longer serialize the same event twice (issue 17).
 */
export interface EventJson {
  readonly event: string
  readonly raw: string | null
}

/** `,"raw":`: what `raw` adds to the event's JSON besides its own (it is never the only key). */
const RAW_KEY_CHARS = 7

/** The event's stored JSON; copies the event only when it has a `raw`. */
export const eventJsonOf = (event: RuntimeEvent): EventJson => {
  if (event.raw === undefined) return { event: JSON.stringify(event), raw: null }
  const { raw, ...canonical } = event
  return { event: JSON.stringify(canonical), raw: JSON.stringify(raw) }
}

/**
 * The length in UTF-16 units of `JSON.stringify(event)`: the same keys and values, `raw` at
 * another place among them, which changes no length.
 */
export const eventJsonLength = (json: EventJson): number =>
  json.raw === null ? json.event.length : json.event.length + RAW_KEY_CHARS + json.raw.length

/** The UTF-8 bytes of `JSON.stringify(event)` (JSON text has no lone surrogate, so bytes add up). */
export const eventJsonBytes = (json: EventJson): number =>
  json.raw === null
    ? Buffer.byteLength(json.event, "utf8")
    : Buffer.byteLength(json.event, "utf8") + RAW_KEY_CHARS + Buffer.byteLength(json.raw, "utf8")

/**
 * The event's JSON as texts to write one after the other, `raw` spliced in last (the stored event
 * JSON is an object with a `type` at least, so it ends with its closing brace): together equal as
 * JSON to `JSON.stringify(event)`. A writer that encodes them in turn never joins a big event's
 * JSON into one more copy of it (issue 31, item 5).
 */
export const eventJsonParts = (json: EventJson): ReadonlyArray<string> =>
  json.raw === null ? [json.event] : [json.event.slice(0, -1), ',"raw":', json.raw, "}"]

/** The event's JSON as one text (`eventJsonParts` joined). */
export const eventJsonText = (json: EventJson): string =>
  json.raw === null ? json.event : eventJsonParts(json).join("")
