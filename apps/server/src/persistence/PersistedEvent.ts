import { RuntimeEvent, type RawNative } from "@planbridge/contracts"
import { Schema } from "effect"
import { describeCause } from "../util/describeCause.ts"
import { eventJsonText } from "./EventJson.ts"
import { storeError, type StoreError } from "./StoreError.ts"

/**
 * Version of the canonical event shape written to the log. Bump it when a shape changes and
 * add the step that lifts the previous version, so that history always replays.
 */
export const CURRENT_EVENT_SCHEMA_VERSION = 1

type JsonObject = { [key: string]: unknown }
const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Upgrades, keyed by the version they lift from. Version 0 is the shape of the first
 * prototype's rows: state changes without `flags`, prompt questions without `secret`,
 * `required`, `multiSelect`, `allowFreeform`, and prompts without `blocking`.
 */
const upgrades: Record<number, (event: JsonObject) => JsonObject> = {
  0: (event) => {
    const payload = isObject(event.payload) ? { ...event.payload } : {}
    if (event.type === "session.state.changed" && !Array.isArray(payload.flags)) payload.flags = []
    if (event.type === "user-input.requested" && isObject(payload.prompt)) {
      const prompt = { ...payload.prompt }
      prompt.blocking ??= true
      if (Array.isArray(prompt.questions)) {
        prompt.questions = prompt.questions.map((q: unknown) =>
          isObject(q) ? { multiSelect: false, allowFreeform: false, secret: false, required: false, ...q } : q
        )
      }
      payload.prompt = prompt
    }
    return { ...event, payload }
  }
}

const decodeEvent = Schema.decodeUnknownSync(RuntimeEvent)

/** A row that does not decode: a `corrupt` store error naming its `seq`, the decoder's failure its cause. */
const undecodable = (seq: number, doing: "decoded" | "parsed", cause: unknown): StoreError =>
  storeError("corrupt", { message: `event #${seq} cannot be ${doing}: ${describeCause(cause)}`, cause })

/** Decodes a row of the event log, lifting older shapes to the current one first. */
export const decodePersistedEvent = (row: {
  readonly seq: number
  readonly schemaVersion: number
  readonly event: string
  readonly raw: string | null
}): RuntimeEvent => {
  try {
    let event: unknown = JSON.parse(row.event)
    for (let version = row.schemaVersion; version < CURRENT_EVENT_SCHEMA_VERSION; version++) {
      const upgrade = upgrades[version]
      if (upgrade === undefined || !isObject(event)) throw new Error(`no upgrade from event schema version ${version}`)
      event = upgrade(event)
    }
    const raw = row.raw === null ? undefined : (JSON.parse(row.raw) as RawNative)
    return decodeEvent(raw === undefined ? event : { ...(event as JsonObject), raw })
  } catch (cause) {
    throw undecodable(row.seq, "decoded", cause)
  }
}

/**
 * The same for the read path a client waits on (its backlog on resume). A row at the current
 * version was written by ingestion as the JSON of an event Schema had just decoded, so it is
 * only parsed; older rows are lifted and decoded as above. Decoding again cost ~35 µs an event:
 * most of a resume of 1,000 missed events (issue 17). Rebuilds (`readAll`) still decode.
 */
export const parsePersistedEvent = (row: {
  readonly seq: number
  readonly schemaVersion: number
  readonly event: string
  readonly raw: string | null
}): RuntimeEvent => {
  if (row.schemaVersion !== CURRENT_EVENT_SCHEMA_VERSION) return decodePersistedEvent(row)
  try {
    const event = JSON.parse(row.event) as RuntimeEvent
    return row.raw === null ? event : { ...event, raw: JSON.parse(row.raw) as RawNative }
  } catch (cause) {
    throw undecodable(row.seq, "parsed", cause)
  }
}

/**
 * The event of a row as JSON text, equal (as JSON) to `parsePersistedEvent(row)`: a row at the
 * current version is sent as stored, its `raw` column spliced in, without parsing or
 * serializing (a resume's backlog: the parse and the frame's `JSON.stringify` were a third of
 * a 1,000-event resume). Older rows are lifted and decoded, then serialized.
 */
export const persistedEventJson = (row: {
  readonly seq: number
  readonly schemaVersion: number
  readonly event: string
  readonly raw: string | null
}): string => {
  // Ingestion stores an event object with a `type` at least, so the text ends with its closing brace.
  if (row.schemaVersion !== CURRENT_EVENT_SCHEMA_VERSION || !row.event.endsWith("}") || row.event === "{}")
    return JSON.stringify(parsePersistedEvent(row))
  return eventJsonText(row)
}
