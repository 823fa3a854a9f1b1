import { Effect, Option } from "effect"
import { resolve } from "node:path"
import { RecoveryQueries, type UnfinishedWork } from "../persistence/RecoveryQueries.ts"
import { fencesOf, SessionLeases, type Lease, type LeaseFences } from "../persistence/SessionLeases.ts"
import type { StoreError } from "../persistence/StoreError.ts"
import { ResumeTargets } from "../persistence/ResumeTargets.ts"
import { ProcessGroups } from "../provider/ProcessGroups.ts"
import { recoveryEventId } from "../provider/kernel/ids.ts"
import { definedFields } from "../util/definedFields.ts"
import { RuntimeIngestion } from "./RuntimeIngestion.ts"
import { SessionHomes } from "./SessionHomes.ts"

const RESTART_REASON = "Planbridge restarted while this was pending; the provider process that asked is gone"

/**
 * At start-up nothing from a previous process is live any more: the native waiters died with
 * their provider processes (any still running are ended first, see ProcessGroups.ts).
 * Everything still pending is resolved `server_restarted`, turns still running are closed as
 * interrupted, sessions are marked stopped — through ordinary events, so clients see why.
 * Event ids are derived from what they resolve, so a crash in the middle of recovery followed
 * by another start appends nothing twice.
 */
export const recoverAfterRestart = Effect.gen(function* () {
  // First of all: provider processes (and the tools they started) that a crashed run left
  // behind are still working in their directories. Only groups proved to be the recorded ones.
  const leftovers = yield* (yield* ProcessGroups).recoverLeftovers
  const leases = Option.getOrUndefined(yield* Effect.serviceOption(SessionLeases))
  // Replicas: another replica's live sessions are not ours to end; a thread is recovered only
  // under its lease (claimed when nobody holds it live), released once its recovery is written.
  const recovered = yield* recoverThreads(leases === undefined ? undefined : (threadId) => leases.claim(threadId))
  const homesRemoved = yield* sweepStaleHomes
  return {
    ...recovered,
    /** Provider process groups of an earlier run that were still running, and were ended. */
    processGroups: leftovers.ended,
    /** Directories under `<data dir>/homes/` that no thread could be resumed from, removed. */
    homes: homesRemoved
  } satisfies Record<string, number>
})

/**
 * Replicas: the threads whose session lease expired (their replica died) are taken over — their
 * pending prompts and requests resolved `server_restarted`, running turns interrupted, sessions
 * marked stopped, as after a restart — and their leases released, so that `thread.resume` on any
 * replica continues them. Run by every replica, every third of the lease time: the claim makes
 * one replica do it.
 */
export const takeOverExpired = Effect.gen(function* () {
  const leases = yield* SessionLeases
  const expired = new Set(yield* leases.expired)
  if (expired.size === 0) return undefined
  return yield* recoverThreads(
    (threadId) => (expired.has(threadId) ? leases.claim(threadId) : Effect.undefined),
    [...expired]
  )
})

/**
 * Closes what is unfinished on the threads `claim` grants (all of them without `claim`), in one
 * batch of ordinary events appended under the granted leases' fences, then releases them (not
 * when the batch failed: see below).
 * `alsoRelease`: threads whose lease is to be claimed and released even when nothing of theirs
 * is unfinished.
 */
const recoverThreads = (
  claim: ((threadId: string) => Effect.Effect<Lease | undefined, StoreError>) | undefined,
  alsoRelease: ReadonlyArray<string> = []
) =>
  Effect.gen(function* () {
    const ingestion = yield* RuntimeIngestion
    const unfinished = yield* (yield* RecoveryQueries).unfinished
    const candidates = new Set<string>([
      ...alsoRelease,
      ...unfinished.prompts.map((p) => p.threadId),
      ...unfinished.requests.map((r) => r.threadId),
      ...unfinished.turns.map((t) => t.threadId),
      ...unfinished.sessions.map((s) => s.threadId)
    ])
    const claimed = new Map<string, Lease>()
    if (claim !== undefined)
      for (const threadId of candidates) {
        const lease = yield* claim(threadId)
        if (lease !== undefined) claimed.set(threadId, lease)
      }
    const ours = (row: { readonly threadId: string }) => claim === undefined || claimed.has(row.threadId)
    const release = Effect.gen(function* () {
      const leases = Option.getOrUndefined(yield* Effect.serviceOption(SessionLeases))
      if (leases !== undefined) for (const lease of claimed.values()) yield* Effect.ignore(leases.release(lease))
    })
    const unfinishedOfOurs = {
      prompts: unfinished.prompts.filter(ours),
      requests: unfinished.requests.filter(ours),
      turns: unfinished.turns.filter(ours),
      sessions: unfinished.sessions.filter(ours)
    }
    // Released once the recovery is written: a recovery that failed (its lease lost while it
    // waited, the database away) keeps the leases it claimed, which expire and are claimed again
    // by the next take-over; released, they would never be recovered.
    return yield* Effect.tap(closeUnfinished(ingestion, unfinishedOfOurs, fencesOf(...claimed.values())), () => release)
  })

/** What recovery closes, the server closes (issue 29): the waiter died with the old process. */
const RECOVERED_BY = { actor: "server" } as const

const closeUnfinished = (
  ingestion: RuntimeIngestion["Service"],
  unfinished: UnfinishedWork,
  fences: LeaseFences | undefined
) =>
  Effect.gen(function* () {
    const now = new Date().toISOString()
    const raw = (what: string, id: string) => ({
      source: "planbridge",
      method: "startup-recovery",
      payload: { resolved: what, id, reason: "server_restarted" }
    })

    const { prompts: pendingPrompts, requests: pendingRequests, turns: runningTurns, sessions: open } = unfinished

    const events: Array<unknown> = []
    for (const prompt of pendingPrompts) {
      events.push({
        type: "user-input.resolved",
        eventId: recoveryEventId("prompt", prompt.promptId),
        provider: prompt.provider,
        threadId: prompt.threadId,
        ...definedFields({ turnId: prompt.turnId ?? undefined }),
        createdAt: now,
        payload: {
          promptId: prompt.promptId,
          resolution: "server_restarted",
          answers: [],
          reason: RESTART_REASON,
          resolvedBy: RECOVERED_BY
        },
        raw: raw("prompt", prompt.promptId)
      })
    }
    for (const request of pendingRequests) {
      events.push({
        type: "request.resolved",
        eventId: recoveryEventId("request", request.requestId),
        provider: request.provider,
        threadId: request.threadId,
        ...definedFields({ turnId: request.turnId ?? undefined }),
        createdAt: now,
        payload: { requestId: request.requestId, resolution: "server_restarted", resolvedBy: RECOVERED_BY },
        raw: raw("request", request.requestId)
      })
    }
    for (const turn of runningTurns) {
      events.push({
        type: "turn.completed",
        eventId: recoveryEventId("turn", `${turn.threadId}:${turn.turnId}`),
        provider: turn.provider,
        threadId: turn.threadId,
        turnId: turn.turnId,
        createdAt: now,
        payload: { status: "interrupted", error: { code: "server_restarted", message: RESTART_REASON } },
        raw: raw("turn", turn.turnId)
      })
    }
    for (const thread of open) {
      events.push({
        type: "session.exited",
        eventId: recoveryEventId("thread", `${thread.threadId}:${thread.lastSeq}`),
        provider: thread.provider,
        threadId: thread.threadId,
        createdAt: now,
        payload: { exitKind: "server_restarted", exitCode: null, signal: null, message: RESTART_REASON },
        raw: raw("session", thread.threadId)
      })
    }
    if (events.length > 0) yield* ingestion.ingestAll(events, fences)
    return {
      prompts: pendingPrompts.length,
      requests: pendingRequests.length,
      turns: runningTurns.length,
      sessions: open.length
    }
  })

/**
 * The retention rule of `<data dir>/homes/<threadId>`: kept while the thread's last
 * `session.started` names it as its `providerHome` (a resume runs on it), removed otherwise: the
 * thread is unknown (its start never got on record) or its sessions keep their state elsewhere.
 */
const sweepStaleHomes = Effect.gen(function* () {
  const found = yield* Effect.serviceOption(SessionHomes)
  // A recovery over a bare store (no data dir of homes) has nothing to sweep.
  if (found._tag === "None") return 0
  const homes = found.value
  const targets = yield* ResumeTargets
  let removed = 0
  for (const name of yield* homes.list) {
    const dir = homes.dirFor(name)
    const target = yield* targets.target(name)
    const needed = target?.providerHome !== undefined && resolve(target.providerHome).startsWith(resolve(dir))
    if (needed) continue
    yield* homes.remove(dir)
    removed += 1
  }
  return removed
})

export type RecoveryReport = Effect.Success<typeof recoverAfterRestart>
