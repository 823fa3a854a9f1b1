import { Effect, Layer } from "effect"
import { SessionLeases, type Lease } from "../SessionLeases.ts"
import { storeFailure } from "../StoreError.ts"
import { PgDatabase } from "./PgDatabase.ts"
import { PgEventLog } from "./PgEventLog.ts"

/**
 * The owner of a released lease row. Released rows stay, so that a thread's fence only grows: a
 * holder that lost its lease can never meet its own fence again in a later lease of the thread.
 */
export const RELEASED_OWNER = ""

/**
 * `SessionLeases` on PostgreSQL (the `session_leases` table). Every expiry is judged by the
 * database's `clock_timestamp()`, never `now()`: `now()` is when the statement's transaction
 * began, which may be long before it runs (a statement that waited on a lock, a database that was
 * paused), and would let a late renewal or check see a dead lease as live. The appends' side of
 * the fence is the event log's (PgEventLog.ts: the lease rows read `for share`, to the commit).
 */
export const pgSessionLeases = (ttlMs: number) =>
  Layer.effect(
    SessionLeases,
    Effect.gen(function* () {
      const { pool } = yield* PgDatabase
      const me = (yield* PgEventLog).origin
      const ttl = `${Math.max(1, Math.round(ttlMs))} milliseconds`
      /** The leases this replica holds, by thread (what `renew` renews). */
      const held = new Map<string, number>()
      let elsewhere = new Set<string>()

      const query = <R extends object>(doing: string, sql: string, values: ReadonlyArray<unknown>) =>
        Effect.tryPromise({
          try: async () => (await pool.query<R>(sql, [...values])).rows,
          catch: storeFailure("write", doing)
        })

      const claim = (threadId: string) =>
        query<{ fence: number }>(
          `claim the lease of thread ${threadId}`,
          `insert into session_leases as l (thread_id, owner, fence, expires_at)
             values ($1, $2, 1, clock_timestamp() + $3::interval)
           on conflict (thread_id) do update
             set owner = excluded.owner, expires_at = excluded.expires_at,
                 fence = case when l.owner = excluded.owner and l.expires_at > clock_timestamp()
                   then l.fence else l.fence + 1 end
             where l.owner = excluded.owner or l.expires_at <= clock_timestamp()
           returning fence`,
          [threadId, me, ttl]
        ).pipe(
          Effect.map((rows): Lease | undefined => {
            const fence = rows[0]?.fence
            if (fence === undefined) return undefined
            held.set(threadId, fence)
            return { threadId, fence }
          })
        )

      const release = (lease: Lease) =>
        query(
          `release the lease of thread ${lease.threadId}`,
          `update session_leases set owner = $4, expires_at = clock_timestamp()
             where thread_id = $1 and owner = $2 and fence = $3`,
          [lease.threadId, me, lease.fence, RELEASED_OWNER]
        ).pipe(
          Effect.ensuring(
            Effect.sync(() => {
              if (held.get(lease.threadId) === lease.fence) held.delete(lease.threadId)
            })
          )
        )

      const ownerElsewhere = (threadId: string) =>
        query<{ owner: string }>(
          `read the lease of thread ${threadId}`,
          `select owner from session_leases
             where thread_id = $1 and owner not in ($2, $3) and expires_at > clock_timestamp()`,
          [threadId, me, RELEASED_OWNER]
        ).pipe(Effect.map((rows) => rows[0]?.owner))

      /** Renews ours (only while unexpired, with the fence we hold), and reads who else holds a live lease. */
      const renew = Effect.gen(function* () {
        const renewing = [...held]
        const renewed = yield* query<{ thread_id: string }>(
          "renew this replica's leases",
          `update session_leases set expires_at = clock_timestamp() + $2::interval
             where owner = $1 and expires_at > clock_timestamp()
               and (thread_id, fence) in (select * from unnest($3::text[], $4::bigint[]))
           returning thread_id`,
          [me, ttl, renewing.map(([threadId]) => threadId), renewing.map(([, fence]) => fence)]
        )
        const kept = new Set(renewed.map((row) => row.thread_id))
        // Only what is still held as it was: a lease claimed or released meanwhile is not lost.
        const lost = renewing
          .filter(([threadId, fence]) => !kept.has(threadId) && held.get(threadId) === fence)
          .map(([threadId, fence]): Lease => ({ threadId, fence }))
        for (const lease of lost) held.delete(lease.threadId)
        const others = yield* query<{ thread_id: string }>(
          "read the other replicas' leases",
          `select thread_id from session_leases
             where owner not in ($1, $2) and expires_at > clock_timestamp()`,
          [me, RELEASED_OWNER]
        )
        elsewhere = new Set(others.map((row) => row.thread_id))
        return lost
      })

      const expired = query<{ thread_id: string }>(
        "read expired leases",
        "select thread_id from session_leases where owner <> $1 and expires_at <= clock_timestamp()",
        [RELEASED_OWNER]
      ).pipe(Effect.map((rows) => rows.map((row) => row.thread_id)))

      return SessionLeases.of({
        replicaId: me,
        ttlMs,
        claim,
        release,
        ownerElsewhere,
        renew,
        expired,
        liveElsewhere: (threadId) => elsewhere.has(threadId)
      })
    })
  )
