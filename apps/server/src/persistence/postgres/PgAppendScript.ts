import type { RuntimeEvent } from "@planbridge/contracts"
import type { EventJson } from "../EventJson.ts"
import { CURRENT_EVENT_SCHEMA_VERSION } from "../PersistedEvent.ts"
import { intArray, literal, textArray } from "./PgLiteral.ts"

/**
 * The channel of the NOTIFY each append transaction sends, by thread:
 * `{"o": origin, "t": [[threadId, first thread_seq, last thread_seq], …]}` (several when the
 * threads do not fit one payload).
 */
export const EVENTS_CHANNEL = "planbridge_events"
/** A NOTIFY payload's bound is 8,000 bytes; announcements are split below it. */
const ANNOUNCEMENT_BYTES = 7_000

/** An event of the batch to insert, with its sequence in its thread and its stored JSON. */
export interface EventRowToInsert {
  readonly event: RuntimeEvent
  readonly threadSeq: number
  readonly json: EventJson
}

/**
 * The batch's events in one INSERT (none when there are none); `seq` is drawn in the order of the
 * rows (ordinality) and returned in it. Each column is one array literal (PgLiteral.ts).
 */
export const insertEvents = (rows: ReadonlyArray<EventRowToInsert>): Array<string> =>
  rows.length === 0
    ? []
    : [
        `insert into events (event_id, thread_id, thread_seq, schema_version, event, raw)
         select e, t, s, ${CURRENT_EVENT_SCHEMA_VERSION}, j, r
         from unnest(${textArray(rows.map((r) => r.event.eventId))}, ${textArray(rows.map((r) => r.event.threadId))},
           ${intArray(rows.map((r) => r.threadSeq))}, ${textArray(rows.map((r) => r.json.event))},
           ${textArray(rows.map((r) => r.json.raw))})
           with ordinality as u(e, t, s, j, r, n)
         order by n
         returning seq`
      ]

/** The transaction's NOTIFYs: each thread's `thread_seq` range, for other writers (PgCommitListener.ts). */
export const announce = (origin: string, rows: ReadonlyArray<EventRowToInsert>): Array<string> => {
  const ranges = new Map<string, [number, number]>()
  for (const { event, threadSeq } of rows) {
    const range = ranges.get(event.threadId)
    if (range === undefined) ranges.set(event.threadId, [threadSeq, threadSeq])
    else range[1] = threadSeq
  }
  const payloads: Array<string> = []
  let entries: Array<string> = []
  let bytes = 0
  const flush = () => {
    if (entries.length > 0) payloads.push(`{"o":${JSON.stringify(origin)},"t":[${entries.join(",")}]}`)
    entries = []
    bytes = 0
  }
  for (const [threadId, [first, last]] of ranges) {
    const entry = JSON.stringify([threadId, first, last])
    const size = Buffer.byteLength(entry)
    if (bytes + size > ANNOUNCEMENT_BYTES) flush()
    entries.push(entry)
    bytes += size + 1
  }
  flush()
  return payloads.map((payload) => `select pg_notify(${literal(EVENTS_CHANNEL)}, ${literal(payload)})`)
}
