import type { RuntimeEvent } from "@planbridge/contracts"
import type pg from "pg"
import type { LeaseFences } from "../SessionLeases.ts"
import { literal, textArray } from "./PgLiteral.ts"
import type { ProjectionPreload } from "./PgProjectionSink.ts"

/** What an append transaction reads under its threads' locks before it folds its batch. */
export interface AppendLoad {
  /** Event ids of the batch already in the log, with the sequences they were given. */
  readonly known: Map<string, { readonly seq: number; readonly threadSeq: number }>
  /** The batch's threads' last `thread_seq`. */
  readonly heads: Map<string, number>
  /** Prompts the batch resolves, as stored (JSON). */
  readonly prompts: Map<string, string>
  /** What the projector reads. */
  readonly projection: ProjectionPreload
}

/**
 * How long an append transaction may sit idle between its two round trips (the slow path,
 * `loadForAppend`) before PostgreSQL ends it. Normally that gap is the in-memory fold of one batch
 * (milliseconds); a writer that stops there (its process paused, its host frozen) would otherwise
 * keep its threads' locks and lease rows for as long as it is stopped, holding up their take-over.
 * Ended, its transaction rolls back and the fence refuses it when it comes back. The one-round-trip
 * append is never idle inside its transaction.
 */
export const IDLE_IN_APPEND_LIMIT = "5s"

/** The SQLSTATE `planbridge_begin_append` raises for a lost lease (migrations/postgres/0010). */
export const FENCED_SQLSTATE = "PBF01"

/**
 * The statement every append transaction runs first (migration 0010's `planbridge_begin_append`):
 * the append lock shared, each of the batch's threads' locks in a fixed order, and the fence proved
 * on the lease rows read `for share` (a claim, renewal or release waits for this transaction's
 * end), live by `clock_timestamp()` after the locks. A lost lease raises `FENCED_SQLSTATE`. Then
 * the transaction takes its id (`pg_current_xact_id()`, evaluated after the call, left to right):
 * holding the append lock, before it draws any `seq`, which is what the committed horizon relies
 * on (PgCommittedHorizon.ts).
 */
export const beginAppendStatement = (
  origin: string,
  threadIds: ReadonlyArray<string>,
  fences: LeaseFences | undefined
): string =>
  `select planbridge_begin_append(${literal(origin)}, ${textArray(threadIds)},
    array[${threadIds.map((t) => literal(fences?.get(t) ?? null)).join(", ")}]::bigint[]), pg_current_xact_id()`

type Json = ReadonlyArray<ReadonlyArray<string | number | null>>

/**
 * The slow path's first round trip: opens the append transaction, takes the locks, proves the fence
 * and reads everything the batch needs, as one simple query (each statement of it sees what was
 * committed before it ran, so the select sees every append of these threads before this one). The
 * arrays come back as JSON.
 */
export const loadForAppend = async (
  client: pg.PoolClient,
  origin: string,
  batch: ReadonlyArray<RuntimeEvent>,
  fences: LeaseFences | undefined
): Promise<AppendLoad> => {
  const threadIds = [...new Set(batch.map((e) => e.threadId))]
  const planThreads = [...new Set(batch.filter((e) => e.type === "turn.plan.updated").map((e) => e.threadId))]
  const promptIds = batch.flatMap((e) => (e.type === "user-input.resolved" ? [e.payload.promptId] : []))
  const threads = textArray(threadIds)
  const sql = `begin; set local idle_in_transaction_session_timeout = ${literal(IDLE_IN_APPEND_LIMIT)};
    ${beginAppendStatement(origin, threadIds, fences)};
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
        where thread_id = any(${textArray(planThreads)}) group by thread_id, turn_id) r) as revisions`
  const results = (await client.query(sql)) as unknown as Array<pg.QueryResult>
  const row = results[3]!.rows[0] as Record<"known" | "heads" | "threads" | "prompts" | "revisions", Json>
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
    projection: { threads: new Set(row.threads.map(([threadId]) => String(threadId))), revisions }
  }
}
