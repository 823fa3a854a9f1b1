import { Effect, Layer } from "effect"
import { SessionLeases } from "../SessionLeases.ts"
import { storeFailure } from "../StoreError.ts"
import { PgDatabase } from "./PgDatabase.ts"
import { PgEventLog } from "./PgEventLog.ts"

/**
 * `SessionLeases` on PostgreSQL (the `session_leases` table, the database's clock). The fences of
 * the leases this replica holds are the event log's (`PgEventLog.fences`): an append for one of
 * its threads commits only while the row still names this replica with that fence, unexpired.
 */
export const pgSessionLeases = (ttlMs: number) =>
  Layer.effect(
    SessionLeases,
    Effect.gen(function* () {
      const { pool } = yield* PgDatabase
      const log = yield* PgEventLog
      const me = log.origin
      const ttl = `${Math.max(1, Math.round(ttlMs))} milliseconds`
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
             values ($1, $2, 1, now() + $3::interval)
           on conflict (thread_id) do update
             set owner = excluded.owner, expires_at = excluded.expires_at,
                 fence = case when l.owner = excluded.owner and l.expires_at > now() then l.fence else l.fence + 1 end
             where l.owner = excluded.owner or l.expires_at <= now()
           returning fence`,
          [threadId, me, ttl]
        ).pipe(
          Effect.map((rows) => {
            const fence = rows[0]?.fence
            if (fence === undefined) return false
            log.fences.set(threadId, fence)
            return true
          })
        )

      const release = (threadId: string) =>
        query(
          `release the lease of thread ${threadId}`,
          "delete from session_leases where thread_id = $1 and owner = $2",
          [threadId, me]
        ).pipe(Effect.ensuring(Effect.sync(() => log.fences.delete(threadId))))

      const ownerElsewhere = (threadId: string) =>
        query<{ owner: string }>(
          `read the lease of thread ${threadId}`,
          "select owner from session_leases where thread_id = $1 and owner <> $2 and expires_at > now()",
          [threadId, me]
        ).pipe(Effect.map((rows) => rows[0]?.owner))

      /** Renews ours (only while unexpired and unfenced), and reads who else holds a live lease. */
      const renew = Effect.gen(function* () {
        const held = [...log.fences]
        const renewed = yield* query<{ thread_id: string }>(
          "renew this replica's leases",
          `update session_leases set expires_at = now() + $2::interval
             where owner = $1 and expires_at > now()
               and (thread_id, fence) in (select * from unnest($3::text[], $4::bigint[]))
           returning thread_id`,
          [me, ttl, held.map(([threadId]) => threadId), held.map(([, fence]) => fence)]
        )
        const kept = new Set(renewed.map((row) => row.thread_id))
        const lost = held.filter(([threadId, fence]) => !kept.has(threadId) && log.fences.get(threadId) === fence)
        for (const [threadId] of lost) log.fences.delete(threadId)
        const others = yield* query<{ thread_id: string }>(
          "read the other replicas' leases",
          "select thread_id from session_leases where owner <> $1 and expires_at > now()",
          [me]
        )
        elsewhere = new Set(others.map((row) => row.thread_id))
        return lost.map(([threadId]) => threadId)
      })

      const expired = query<{ thread_id: string }>(
        "read expired leases",
        "select thread_id from session_leases where expires_at <= now()",
        []
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
