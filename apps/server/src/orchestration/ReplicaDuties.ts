import { Effect, type Scope } from "effect"
import type { ResolvedBy } from "@planbridge/contracts"
import type { Lease, SessionLeases } from "../persistence/SessionLeases.ts"
import type { SessionError } from "./SessionManager.ts"
import type { RelayedCommand, ReplicaRouting } from "./ReplicaRouting.ts"

/**
 * What a replica does for as long as it runs (PostgreSQL), every third of the lease time:
 * renews its leases (a session whose lease was lost — the database unreachable or paused past the
 * lease time, or the replica paused — is ended here: the event log refuses its appends anyway,
 * whatever happens to the lease afterwards, since they prove the lost fence), takes
 * over the threads of replicas that died (StartupRecovery.takeOverExpired), and serves the
 * commands relayed to it. A failed round (the database away) is logged and retried at the next.
 */
export const startReplicaDuties = (duties: {
  readonly leases: SessionLeases["Service"]
  readonly routing: ReplicaRouting
  readonly runRelayed: (command: RelayedCommand, by: ResolvedBy | undefined) => Effect.Effect<object, SessionError>
  readonly live: ReadonlyMap<string, { readonly scope: Scope.Closeable; readonly lease: Lease | undefined }>
  readonly retire: (threadId: string, scope: Scope.Closeable) => Effect.Effect<void>
  /** StartupRecovery.takeOverExpired with its services. */
  readonly takeOver: Effect.Effect<void, unknown>
}) =>
  Effect.gen(function* () {
    const { leases, live } = duties
    yield* duties.routing.serve(duties.runRelayed)
    const renewals = Effect.gen(function* () {
      for (const lost of yield* leases.renew) {
        // Only the session that ran under the lost lease: its appends are refused from now on.
        const session = live.get(lost.threadId)
        if (session !== undefined && session.lease?.fence === lost.fence)
          yield* duties.retire(lost.threadId, session.scope)
      }
    })
    const every = Math.max(50, Math.round(leases.ttlMs / 3))
    // Two loops, not one round: a take-over that waits (on the append lock, on a database that is
    // slow) must not hold up the renewal of the leases this replica's sessions run under.
    const loop = (name: string, duty: Effect.Effect<unknown, unknown>) =>
      Effect.forkScoped(
        Effect.forever(
          Effect.andThen(
            Effect.sleep(every),
            duty.pipe(Effect.catchCause((cause) => Effect.logWarning(`replica: ${name} failed; retried`, cause)))
          )
        )
      )
    yield* loop("the renewal of its leases", renewals)
    yield* loop("the take-over of expired leases", duties.takeOver)
  })
