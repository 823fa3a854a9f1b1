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

/**
 * The most bytes of events an announcement carries (`carried`, below), under the NOTIFY payload's
 * 8,000-byte bound with room for the header: a larger transaction is announced by ranges only.
 */
export const CARRIED_EVENT_BYTES = 6_500
/** An upper bound of what a carried row adds besides its texts (numbers, quotes, separators). */
const CARRIED_ROW_OVERHEAD = 64

/**
 * The transaction's NOTIFYs: each thread's `thread_seq` range, for other writers
 * (PgCommitListener.ts); when the batch's events fit one payload (`CARRIED_EVENT_BYTES`), the
 * events themselves too, `"e": [[seq, thread_id, thread_seq, schema_version, event, raw], …]` in
 * `seq` order, so that other writers publish them without reading them back (one round trip less
 * per commit heard, and no read queued behind another). The rows are those the INSERT just wrote,
 * read back by the transaction itself (its `seq`s are drawn there), written by PostgreSQL's JSON
 * functions; the bound is checked here first, on the texts' JSON sizes, which are the sizes
 * PostgreSQL writes (the same escaping), so the NOTIFY never exceeds its bound.
 */
export const announce = (origin: string, rows: ReadonlyArray<EventRowToInsert>): Array<string> => {
  const ranges = new Map<string, [number, number]>()
  let carried = 0
  for (const { event, threadSeq, json } of rows) {
    const range = ranges.get(event.threadId)
    if (range === undefined) ranges.set(event.threadId, [threadSeq, threadSeq])
    else range[1] = threadSeq
    if (carried <= CARRIED_EVENT_BYTES)
      carried +=
        CARRIED_ROW_OVERHEAD +
        Buffer.byteLength(JSON.stringify(event.threadId)) +
        Buffer.byteLength(JSON.stringify(json.event)) +
        (json.raw === null ? 0 : Buffer.byteLength(JSON.stringify(json.raw)))
  }
  const entries = [...ranges].map(([threadId, [first, last]]) => JSON.stringify([threadId, first, last]))
  const head = `{"o":${JSON.stringify(origin)},"t":[${entries.join(",")}]`
  if (rows.length > 0 && carried + Buffer.byteLength(head) <= CARRIED_EVENT_BYTES) {
    const threads = [...ranges]
    return [
      `select pg_notify(${literal(EVENTS_CHANNEL)}, ${literal(`${head},"e":`)} ||
        (select json_agg(json_build_array(seq, thread_id, thread_seq, schema_version, event, raw) order by seq)
           from unnest(${textArray(threads.map(([t]) => t))}, ${intArray(threads.map(([, [a]]) => a))},
             ${intArray(threads.map(([, [, b]]) => b))}) as u(t, a, b)
           join events on thread_id = u.t and thread_seq between u.a and u.b)::text || '}')`
    ]
  }
  const payloads: Array<string> = []
  let batch: Array<string> = []
  let bytes = 0
  const flush = () => {
    if (batch.length > 0) payloads.push(`{"o":${JSON.stringify(origin)},"t":[${batch.join(",")}]}`)
    batch = []
    bytes = 0
  }
  for (const entry of entries) {
    const size = Buffer.byteLength(entry)
    if (bytes + size > ANNOUNCEMENT_BYTES) flush()
    batch.push(entry)
    bytes += size + 1
  }
  flush()
  return payloads.map((payload) => `select pg_notify(${literal(EVENTS_CHANNEL)}, ${literal(payload)})`)
}
