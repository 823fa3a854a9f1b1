import type pg from "pg"
import { APPEND_LOCK } from "./PgEventLog.ts"

/** The first wait between two looks at the appends in flight; doubled up to `HORIZON_POLL_MAX_MS`. */
const HORIZON_POLL_MS = 2
const HORIZON_POLL_MAX_MS = 50

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The highest `seq` below which every event has committed, read without a lock that appends wait
 * for. Appends of different threads run at once, so a smaller `seq` can commit after a larger one.
 * Every append transaction takes the append lock (shared) and then its transaction id, before it
 * draws a `seq` (`beginAppendStatement`, PgAppendLoad.ts). So one statement reads the committed
 * `max(seq)` and then takes a transaction id `x`: an append that drew a `seq` at or below that
 * maximum without having committed got its id before `x`, and still holds the append lock; an
 * append that gets its id after `x` draws its `seq`s above the maximum. The maximum is returned
 * once no holder of the append lock has an id below `x` (each look one round trip, waiting for the
 * appends that were in flight only: new ones are not held off, as the exclusive lock held them).
 */
export const readCommittedHorizon = async (pool: pg.Pool): Promise<number> => {
  const { rows } = await pool.query<{ seq: number; x: string }>(
    "select coalesce(max(seq), 0)::bigint as seq, pg_current_xact_id()::text as x from events"
  )
  const { seq, x } = rows[0]!
  for (let wait = HORIZON_POLL_MS; ; wait = Math.min(wait * 2, HORIZON_POLL_MAX_MS)) {
    const look = await pool.query<{ busy: boolean }>(
      `select exists (
         select 1 from pg_locks a join pg_locks t on t.virtualtransaction = a.virtualtransaction
         where a.locktype = 'advisory' and a.classid = 0 and a.objid = $2 and a.objsubid = 1 and a.granted
           and t.locktype = 'transactionid' and t.mode = 'ExclusiveLock' and t.granted
           and planbridge_xid8(t.transactionid) < $1::xid8) as busy`,
      [x, APPEND_LOCK]
    )
    if (!look.rows[0]!.busy) return Number(seq)
    await sleep(wait)
  }
}
