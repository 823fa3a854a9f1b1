import { Context, type Effect } from "effect"
import type { StoreError } from "./StoreError.ts"

/**
 * Which replica owns a thread's live provider session, when several `planbridge serve` processes
 * share one store (PostgreSQL: postgres/PgSessionLeases.ts). A single server (SQLite) has no
 * leases: the service is absent and every session is its own.
 *
 * A lease is claimed before a session starts (new or resumed) and released when it ends; while
 * its replica lives it is renewed every third of its time to live. A replica that dies stops
 * renewing: its leases expire and any replica may take the thread over (recover what it left
 * pending, then resume it). The event log refuses appends for a thread from a replica whose
 * lease is gone or was taken over (the fence), so a replica that comes back late writes nothing.
 */
export class SessionLeases extends Context.Service<
  SessionLeases,
  {
    /** This replica's id: the owner named in its leases and in relayed commands. */
    readonly replicaId: string
    /** How long a lease lives unrenewed; renewals come every third of it. */
    readonly ttlMs: number
    /**
     * Takes the thread's lease when nobody holds a live one (a new owner: the fence grows), or
     * renews our own; false when another replica holds it.
     */
    readonly claim: (threadId: string) => Effect.Effect<boolean, StoreError>
    /** Gives the lease up (the session ended); appends for the thread are no longer fenced by it. */
    readonly release: (threadId: string) => Effect.Effect<void, StoreError>
    /** The replica that holds a live lease on the thread, when it is not this one. */
    readonly ownerElsewhere: (threadId: string) => Effect.Effect<string | undefined, StoreError>
    /**
     * Renews every lease this replica holds; answers the threads whose lease it lost (expired
     * and taken, or gone), so that their sessions are ended here.
     */
    readonly renew: Effect.Effect<ReadonlyArray<string>, StoreError>
    /** Threads whose lease expired (their owner died or lost the database): to be taken over. */
    readonly expired: Effect.Effect<ReadonlyArray<string>, StoreError>
    /** Threads with a live lease held by another replica, as of the last `renew` (for `live` in lists). */
    readonly liveElsewhere: (threadId: string) => boolean
  }
>()("planbridge/SessionLeases") {}
