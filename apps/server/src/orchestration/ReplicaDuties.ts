import { Effect, type Scope } from "effect"
import type { SessionLeases } from "../persistence/SessionLeases.ts"
import type { SessionError } from "./SessionManager.ts"
import type { RelayedCommand, ReplicaRouting } from "./ReplicaRouting.ts"

/**
 * What a replica does for as long as it runs (PostgreSQL), every third of the lease time:
 * renews its leases (a session whose lease was lost — the database unreachable past the lease
 * time, or the replica paused — is ended here: the event log refuses its appends anyway), takes
 * over the threads of replicas that died (StartupRecovery.takeOverExpired), and serves the
 * commands relayed to it. A failed round (the database away) is retried at the next one.
 */
export const startReplicaDuties = (duties: {
  readonly leases: SessionLeases["Service"]
  readonly routing: ReplicaRouting
  readonly runRelayed: (command: RelayedCommand) => Effect.Effect<object, SessionError>
  readonly live: ReadonlyMap<string, { readonly scope: Scope.Closeable }>
  readonly retire: (threadId: string, scope: Scope.Closeable) => Effect.Effect<void>
  /** StartupRecovery.takeOverExpired with its services. */
  readonly takeOver: Effect.Effect<void, unknown>
}) =>
  Effect.gen(function* () {
    const { leases, live } = duties
    yield* duties.routing.serve(duties.runRelayed)
    const round = Effect.gen(function* () {
      for (const threadId of yield* leases.renew) {
        const session = live.get(threadId)
        if (session !== undefined) yield* duties.retire(threadId, session.scope)
      }
      yield* duties.takeOver
    })
    const every = Math.max(50, Math.round(leases.ttlMs / 3))
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(every), Effect.ignore(round))))
  })
