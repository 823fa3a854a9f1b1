import { Context, type Effect } from "effect"
import type { StoreError } from "./StoreError.ts"

/**
 * A lease as one holder has it: the thread and the fence it was granted. Whoever claimed it (a
 * session, a take-over's recovery) appends under it, and the store commits those appends only
 * while the lease row still names this replica with this very fence, unexpired by the database's
 * clock: a holder that lost the lease (expired, taken over, released) never appends again.
 */
export interface Lease {
  readonly threadId: string
  readonly fence: number
}

/** The leases an append proves it holds, by thread (`fence` by `threadId`). */
export type LeaseFences = ReadonlyMap<string, number>

/** The fences of `leases` as an append's proof. */
export const fencesOf = (...leases: ReadonlyArray<Lease | undefined>): LeaseFences | undefined => {
  const held = leases.filter((lease) => lease !== undefined)
  return held.length === 0 ? undefined : new Map(held.map((lease) => [lease.threadId, lease.fence]))
}

/**
 * Which replica owns a thread's live provider session, when several `planbridge serve` processes
 * share one store (PostgreSQL: postgres/PgSessionLeases.ts). A single server (SQLite) has no
 * leases: the service is absent and every session is its own.
 *
 * A lease is claimed before a session starts (new or resumed) and released when it ends; while
 * its replica lives it is renewed every third of its time to live. A replica that dies stops
 * renewing: its leases expire and any replica may take the thread over (recover what it left
 * pending, then resume it). Every claim grants a new fence (a number that only grows, per
 * thread, also across releases); the holder's appends carry it (`LeaseFences`) and the event log
 * refuses them (`fenced`) unless the lease row still holds that fence for this replica, live —
 * checked under a row lock held to the commit, so no take-over can slip in between.
 */
export class SessionLeases extends Context.Service<
  SessionLeases,
  {
    /** This replica's id: the owner named in its leases and in relayed commands. */
    readonly replicaId: string
    /** How long a lease lives unrenewed; renewals come every third of it. */
    readonly ttlMs: number
    /**
     * Takes the thread's lease when nobody holds a live one (a new fence), or renews our own
     * live one (the same fence); undefined when another replica holds it.
     */
    readonly claim: (threadId: string) => Effect.Effect<Lease | undefined, StoreError>
    /**
     * Gives the lease up (its holder is done), when the row still holds its fence for us: a
     * lease lost meanwhile is not ours to release. The fence is kept, for the next claim to grow.
     */
    readonly release: (lease: Lease) => Effect.Effect<void, StoreError>
    /** The replica that holds a live lease on the thread, when it is not this one. */
    readonly ownerElsewhere: (threadId: string) => Effect.Effect<string | undefined, StoreError>
    /**
     * Renews every lease this replica holds (while unexpired by the database's clock); answers
     * the leases it lost (expired, taken or gone), so that their holders are ended here.
     */
    readonly renew: Effect.Effect<ReadonlyArray<Lease>, StoreError>
    /** Threads whose lease expired (their owner died or lost the database): to be taken over. */
    readonly expired: Effect.Effect<ReadonlyArray<string>, StoreError>
    /** Threads with a live lease held by another replica, as of the last `renew` (for `live` in lists). */
    readonly liveElsewhere: (threadId: string) => boolean
  }
>()("planbridge/SessionLeases") {}
