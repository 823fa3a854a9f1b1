import type { RuntimeEvent } from "@planbridge/contracts"
import type pg from "pg"
import type { StoredEvent } from "../EventStore.ts"
import { parsePersistedEvent } from "../PersistedEvent.ts"
import { literal, textArray } from "./PgLiteral.ts"
import type { ProjectionPreload } from "./PgProjectionSink.ts"

/** What an append transaction reads under the lock before it folds its batch. */
export interface AppendLoad {
  /** Event ids of the batch already in the log, with the sequences they were given. */
  readonly known: Map<string, { readonly seq: number; readonly threadSeq: number }>
  /** The batch's threads' last `thread_seq`. */
  readonly heads: Map<string, number>
  /** Prompts the batch resolves, as stored (JSON). */
  readonly prompts: Map<string, string>
  /** What the projector reads. */
  readonly projection: ProjectionPreload
  /** Events other writers committed after this process's last published `seq`, in order. */
  readonly earlier: Array<StoredEvent>
  /** The leases of the batch's threads (replicas): owner, fence, and whether it is unexpired. */
  readonly leases: Map<string, { readonly owner: string; readonly fence: number; readonly live: boolean }>
}

/**
 * How long an append transaction may sit idle between its two round trips before PostgreSQL ends
 * it. Normally that gap is the in-memory fold of one batch (milliseconds); a writer that stops
 * there (its process paused, its host frozen) would otherwise keep the append lock and its lease
 * rows locked for as long as it is stopped, holding up every replica's appends and the take-over
 * of its threads. Ended, its transaction rolls back and the fence refuses it when it comes back.
 */
export const IDLE_IN_APPEND_LIMIT = "5s"

type Json = ReadonlyArray<ReadonlyArray<string | number | null>>

/**
 * Opens the append transaction, takes the append lock and reads everything the batch needs, in
 * one round trip: `begin; set; lock; select …` as one simple query (each statement of it sees
 * what was committed before it ran, so the select sees every append before this one). The
 * batch's lease rows are read `for share`: locked against any claim, renewal or release until
 * the transaction ends, so the fence checked on them holds at the commit; `live` by the
 * database's clock at the read. The arrays come back as JSON.
 */
export const beginAppend = async (
  client: pg.PoolClient,
  lock: bigint | number,
  batch: ReadonlyArray<RuntimeEvent>,
  publishedSeq: number
): Promise<AppendLoad> => {
  const threadIds = [...new Set(batch.map((e) => e.threadId))]
  const planThreads = [...new Set(batch.filter((e) => e.type === "turn.plan.updated").map((e) => e.threadId))]
  const promptIds = batch.flatMap((e) => (e.type === "user-input.resolved" ? [e.payload.promptId] : []))
  const threads = textArray(threadIds)
  const sql = `begin; set local idle_in_transaction_session_timeout = ${literal(IDLE_IN_APPEND_LIMIT)};
    select pg_advisory_xact_lock(${literal(lock)});
    with leases as (select thread_id, owner, fence, expires_at > clock_timestamp() as live from session_leases
      where thread_id = any(${threads}) for share)
    select
    (select coalesce(json_agg(json_build_array(event_id, seq, thread_seq)), '[]') from events
      where event_id = any(${textArray(batch.map((e) => e.eventId))})) as known,
    (select coalesce(json_agg(json_build_array(t, (select max(thread_seq) from events where thread_id = t))), '[]')
      from unnest(${threads}) as t) as heads,
    (select coalesce(json_agg(json_build_array(thread_id)), '[]') from threads where thread_id = any(${threads})) as threads,
    (select coalesce(json_agg(json_build_array(prompt_id, prompt)), '[]') from prompts
      where prompt_id = any(${textArray(promptIds)})) as prompts,
    (select coalesce(json_agg(json_build_array(thread_id, turn_id, revision)), '[]') from
      (select thread_id, turn_id, max(revision) as revision from plan_snapshots
        where thread_id = any(${textArray(planThreads)}) group by thread_id, turn_id) r) as revisions,
    (select coalesce(json_agg(json_build_array(seq, thread_seq, schema_version, event, raw) order by seq), '[]')
      from events where seq > ${literal(publishedSeq)}) as earlier,
    (select coalesce(json_agg(json_build_array(thread_id, owner, fence, live)), '[]') from leases) as leases`
  const results = (await client.query(sql)) as unknown as Array<pg.QueryResult>
  const row = results[3]!.rows[0] as Record<
    "known" | "heads" | "threads" | "prompts" | "revisions" | "earlier" | "leases",
    Json
  >
  const revisions = new Map<string, Map<string, number>>()
  for (const [threadId, turnId, revision] of row.revisions) {
    const turns = revisions.get(String(threadId)) ?? revisions.set(String(threadId), new Map()).get(String(threadId))!
    turns.set(String(turnId), Number(revision))
  }
  return {
    known: new Map(
      row.known.map(([id, seq, threadSeq]) => [String(id), { seq: Number(seq), threadSeq: Number(threadSeq) }])
    ),
    heads: new Map(row.heads.flatMap(([threadId, head]) => (head === null ? [] : [[String(threadId), Number(head)]]))),
    prompts: new Map(row.prompts.map(([promptId, prompt]) => [String(promptId), String(prompt)])),
    leases: new Map(
      row.leases.map(([threadId, owner, fence, live]) => [
        String(threadId),
        { owner: String(owner), fence: Number(fence), live: (live as unknown) === true }
      ])
    ),
    projection: { threads: new Set(row.threads.map(([threadId]) => String(threadId))), revisions },
    earlier: row.earlier.map(([seq, threadSeq, schemaVersion, event, raw]) => {
      const stored = { seq: Number(seq), threadSeq: Number(threadSeq), schemaVersion: Number(schemaVersion) }
      const persisted = { ...stored, event: String(event), raw: raw === null ? null : String(raw) }
      return { seq: stored.seq, threadSeq: stored.threadSeq, event: parsePersistedEvent(persisted) }
    })
  }
}
