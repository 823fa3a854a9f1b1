import type { RuntimeEvent } from "@planbridge/contracts"
import { Cause, Effect, Exit, Scope } from "effect"
import { fencesOf, type Lease, type SessionLeases } from "../persistence/SessionLeases.ts"
import {
  AdapterError,
  adapterError,
  EmitError,
  type ProviderAdapter,
  type ProviderSession,
  type StartSessionInput
} from "../provider/ProviderAdapter.ts"
import { commandError } from "./CommandErrors.ts"
import type { ResolutionAttribution } from "./ResolutionAttribution.ts"
import { asServerStopped } from "./ServerStop.ts"
import type { RuntimeIngestion } from "./RuntimeIngestion.ts"
import { stampStarted, type StartedStamp } from "./ThreadResume.ts"

/** A provider session of this server, with the scope its process lives in. */
export interface LiveSession {
  readonly session: ProviderSession
  readonly scope: Scope.Closeable
  /** The thread's lease it runs under (replicas); its appends prove it. */
  readonly lease: Lease | undefined
}

type RegisteredStart = ProviderAdapter["startSession"]

/**
 * How sessions become live and stop being live: each is launched in a scope of its own, under its
 * thread's lease with replicas, its events ingested (stamped, under the lease's fence), and retired
 * when its provider exits or its lease is lost.
 */
export const makeLiveSessions = (deps: {
  /** The live sessions by thread; the manager and the replica duties read it. */
  readonly live: Map<string, LiveSession>
  readonly ingestion: RuntimeIngestion["Service"]
  /** The thread leases (replicas, PostgreSQL); undefined on one server. */
  readonly leases: SessionLeases["Service"] | undefined
  /** Who resolved what: the sessions' resolutions are stamped with it (issue 29). */
  readonly attribution: ResolutionAttribution
  /**
   * Captures a thread's provider state into the store (issue 32): after each completed turn (a
   * SIGKILLed server captures nothing more), and when its session ends, after its process exited
   * and before its lease is released (exit, server stop, lost lease, abandoned session).
   */
  readonly capture: (threadId: string, lease: Lease | undefined) => Effect.Effect<void>
}) => {
  const { live, ingestion, leases, attribution, capture } = deps
  /** Set by `closeAll`: what sessions report from then on is the server stopping (ServerStop.ts). */
  let stopping = false
  const stamped = (event: RuntimeEvent, stamp: StartedStamp) =>
    stampStarted(stopping ? asServerStopped(event) : event, stamp)

  /**
   * A session whose provider exited is dropped, and its scope closed, so nothing leaks. Only
   * that session: a late exit of an earlier one must not end the session a resume started since.
   */
  const retire = (threadId: string, scope: Scope.Closeable) =>
    Effect.suspend(() => {
      const ended = live.get(threadId)
      if (ended === undefined || ended.scope !== scope) return Effect.void
      live.delete(threadId)
      // Detached: the adapter is still inside this emit, and its finalizers wait for it.
      return Effect.asVoid(
        Effect.forkDetach(
          Scope.close(ended.scope, Exit.void).pipe(
            Effect.andThen(capture(threadId, ended.lease)),
            Effect.andThen(releaseLease(ended.lease))
          )
        )
      )
    })

  /** What follows recorded events: a completed turn is captured (in the background), an exit retires the session. */
  const after =
    (threadId: string, scope: Scope.Closeable, lease: Lease | undefined) => (types: ReadonlyArray<string>) =>
      Effect.andThen(
        types.includes("turn.completed") ? Effect.forkDetach(capture(threadId, lease)) : Effect.void,
        types.includes("session.exited") ? retire(threadId, scope) : Effect.void
      )

  const emitFor = (threadId: string, stamp: StartedStamp, scope: Scope.Closeable, lease: Lease | undefined) => {
    const fences = fencesOf(lease)
    return (event: RuntimeEvent) =>
      ingestion.ingest(attribution.stamp([stamped(event, stamp)])[0]!, fences).pipe(
        Effect.mapError((error) => new EmitError({ cause: error })),
        Effect.andThen(() => after(threadId, scope, lease)([event.type]))
      )
  }

  const emitAllFor = (threadId: string, stamp: StartedStamp, scope: Scope.Closeable, lease: Lease | undefined) => {
    const fences = fencesOf(lease)
    return (events: ReadonlyArray<RuntimeEvent>) =>
      ingestion.ingestAll(attribution.stamp(events.map((event) => stamped(event, stamp))), fences).pipe(
        Effect.mapError((error) => new EmitError({ cause: error })),
        Effect.andThen(() => after(threadId, scope, lease)(events.map((event) => event.type)))
      )
  }

  /** Replicas: the lease a session runs under, taken before it starts (none on one server). */
  const claimLease = (threadId: string) =>
    leases === undefined
      ? Effect.undefined
      : Effect.flatMap(leases.claim(threadId), (lease) =>
          lease !== undefined
            ? Effect.succeed(lease)
            : Effect.fail(
                commandError("busy", `thread '${threadId}' is being started or taken over by another replica`)
              )
        )
  const releaseLease = (lease: Lease | undefined) =>
    leases === undefined || lease === undefined ? Effect.void : Effect.ignore(leases.release(lease))

  /**
   * Starts an adapter session in a scope of its own and makes it live; on failure the scope is
   * closed (the process ended) and the adapter's error (or the defect, as text) returned.
   */
  const launch = (
    startSession: RegisteredStart,
    input: Omit<StartSessionInput, "emit" | "emitAll">,
    stamp: StartedStamp,
    lease: Lease | undefined
  ): Effect.Effect<AdapterError | undefined> =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const emit = emitFor(input.threadId, stamp, scope, lease)
      const emitAll = emitAllFor(input.threadId, stamp, scope, lease)
      const exit = yield* Effect.exit(
        startSession({ ...input, emit, emitAll }).pipe(Effect.provideService(Scope.Scope, scope))
      )
      if (Exit.isSuccess(exit)) {
        live.set(input.threadId, { session: exit.value, scope, lease })
        return undefined
      }
      yield* Scope.close(scope, exit)
      const failure = Cause.findErrorOption(exit.cause)
      return failure._tag === "Some"
        ? failure.value
        : adapterError("start_failed", String(exit.cause), { cause: exit.cause })
    })

  /** Closes every live session (its provider process ends) and releases its lease. */
  const closeAll = Effect.gen(function* () {
    stopping = true
    for (const [threadId, { scope, lease }] of live) {
      live.delete(threadId)
      yield* Scope.close(scope, Exit.void)
      yield* capture(threadId, lease)
      yield* releaseLease(lease)
    }
  })

  return { retire, claimLease, releaseLease, launch, closeAll }
}
