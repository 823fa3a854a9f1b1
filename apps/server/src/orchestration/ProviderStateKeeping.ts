import { Effect, Semaphore } from "effect"
import type { ProviderStates } from "../persistence/ProviderStates.ts"
import type { ResumeTargets } from "../persistence/ResumeTargets.ts"
import type { Lease } from "../persistence/SessionLeases.ts"
import { commandError } from "./CommandErrors.ts"
import { capturesState, collectProviderState, writeProviderState } from "./ProviderStateFiles.ts"
import type { SessionHomes } from "./SessionHomes.ts"

/**
 * Keeps isolated provider homes in the store (issue 32), so that a server whose data dir lacks a
 * thread's home (another machine's replica, a data dir lost) can still resume it:
 * - `capture` reads the files the thread's provider resumes from (ProviderStateFiles.ts) out of
 *   the home its last `session.started` names, and stores them sealed (ProviderStates.ts). Only
 *   homes of ours: user mode keeps the user's own homes, never copied. Captures run one at a time,
 *   so two of one thread never interleave; a failed one is logged (the thread and the reason,
 *   nothing of its content) and the previous capture stays.
 * - `restore` writes the stored files into this server's home for the thread before
 *   `thread.resume` starts its provider there.
 * Without ProviderStates (SQLite, or PostgreSQL outside `serve`) both do nothing.
 */
export const makeProviderStateKeeping = (deps: {
  readonly states: ProviderStates["Service"] | undefined
  readonly targets: ResumeTargets["Service"]
  readonly homes: SessionHomes["Service"]
  /** The provider's home for a thread directory of ours (its adapter's `homeFor`), if it keeps one. */
  readonly homeFor: (provider: string, threadDir: string) => string | undefined
}) =>
  Effect.gen(function* () {
    const { states, targets, homes } = deps
    const oneAtATime = yield* Semaphore.make(1)

    const capture = (threadId: string, lease: Lease | undefined): Effect.Effect<void> => {
      if (states === undefined) return Effect.void
      return oneAtATime
        .withPermits(1)(
          Effect.gen(function* () {
            const target = yield* targets.target(threadId)
            const home = target?.providerHome
            if (target === undefined || home === undefined || !homes.owns(home)) return
            if (!capturesState(target.provider)) return
            const files = yield* collectProviderState(threadId, target.provider, home)
            if (files.length === 0) return
            yield* states.save(threadId, { provider: target.provider, files }, lease?.fence ?? 0)
          })
        )
        .pipe(
          Effect.catchCause((cause) =>
            Effect.logWarning(
              `thread ${threadId}: its provider state was not captured; the previous capture stays`,
              cause
            )
          )
        )
    }

    const restore = (threadId: string, provider: string) =>
      Effect.gen(function* () {
        if (states === undefined) return undefined
        const home = deps.homeFor(provider, homes.dirFor(threadId))
        if (home === undefined || !homes.owns(home)) return undefined
        const stored = yield* Effect.mapError(states.load(threadId), (error) =>
          error.reason._tag === "StoreCorrupt" || error.reason._tag === "StoreTooLarge"
            ? commandError(
                "resume_failed",
                `${error.message}; the thread stays readable, start a new session`,
                undefined,
                {
                  cause: error
                }
              )
            : error
        )
        if (stored === undefined) return undefined
        const cannot = (error: Error) =>
          commandError(
            "resume_failed",
            `cannot restore the ${provider} state of thread '${threadId}': ${error.message}`,
            undefined,
            { cause: error }
          )
        yield* Effect.mapError(homes.prepare(home), cannot)
        yield* Effect.mapError(writeProviderState(home, stored.files), cannot)
        yield* Effect.logInfo(
          `thread ${threadId}: its ${provider} state (${stored.files.length} files) restored from the store into ${home}`
        )
        return home
      })

    return { capture, restore }
  })
