import type { OperatingMode, RuntimeEvent, ThreadId, ThreadResumeResult } from "@planbridge/contracts"
import { Deferred, Effect } from "effect"
import type { ResumeTarget, ResumeTargets } from "../persistence/ResumeTargets.ts"
import type { Lease } from "../persistence/SessionLeases.ts"
import type { StoreError } from "../persistence/StoreError.ts"
import type { AdapterError, ProviderAdapter, StartSessionInput } from "../provider/ProviderAdapter.ts"
import { definedFields } from "../util/definedFields.ts"
import { commandError, providerRefused, type CommandError } from "./CommandErrors.ts"
import type { SessionHomes } from "./SessionHomes.ts"

/** What `thread.resume` answers: `resumed: false` when the thread was live already (nothing started). */
export type { ThreadResumeResult } from "@planbridge/contracts"

/** What the server adds to a session's `session.started`: where its state lives, what it resumed. */
export interface StartedStamp {
  readonly providerHome?: string
  readonly resumedFrom?: string
}

/**
 * The adapter reports the native side of `session.started`; the server knows which home it gave
 * the session and which native conversation it asked it to resume, and records both there, so
 * the event log alone holds what the next resume needs.
 */
export const stampStarted = (event: RuntimeEvent, stamp: StartedStamp): RuntimeEvent => {
  if (event.type !== "session.started") return event
  const payload = {
    ...event.payload,
    ...(stamp.resumedFrom === undefined ? {} : { resumed: true, resumedFrom: stamp.resumedFrom }),
    ...(stamp.providerHome === undefined ? {} : { providerHome: stamp.providerHome })
  }
  return { ...event, payload }
}

/**
 * Why a thread cannot be resumed before anything starts, or undefined when it can be tried: its
 * provider must publish `supportsResume` for it and a native conversation must be on record.
 */
export const resumeRefusal = (target: ResumeTarget): CommandError | undefined => {
  if (!target.supportsResume)
    return commandError(
      "unsupported",
      `thread '${target.threadId}' cannot be resumed: its ${target.provider} session did not support it (supportsResume is false)`
    )
  if (target.nativeId === undefined || target.cwd === undefined)
    return commandError(
      "resume_failed",
      `thread '${target.threadId}' has no native session on record to resume; it stays readable, start a new session`
    )
  return undefined
}

/** The `session_not_live` refusal, saying when `thread.resume` would give the thread a session again. */
export const notLive = (threadId: string, resumable: boolean): CommandError =>
  commandError(
    "session_not_live",
    `thread '${threadId}' has no live provider session (it ended or the server restarted)` +
      (resumable ? "; send thread.resume to attach a new session that continues the conversation" : "")
  )

export interface ResumeDeps {
  readonly isLive: (threadId: string) => boolean
  /** Replicas: true when another replica holds the thread's live session lease. */
  readonly liveElsewhere: (threadId: string) => Effect.Effect<boolean, StoreError>
  /** Replicas: takes the thread's lease for the new session (after what a dead owner left is closed). */
  readonly claim: (threadId: string) => Effect.Effect<Lease | undefined, CommandError | StoreError>
  readonly release: (lease: Lease | undefined) => Effect.Effect<void>
  readonly targets: ResumeTargets["Service"]
  readonly homes: SessionHomes["Service"]
  /**
   * Isolated homes (issue 32): writes the thread's provider state, as the store keeps it, into a
   * home of this server; that home, or undefined when none is stored (or the provider keeps the
   * user's own home). Called when the recorded home is not on this machine.
   */
  readonly restore: (
    threadId: ThreadId,
    provider: string
  ) => Effect.Effect<string | undefined, CommandError | StoreError>
  readonly adapterOf: (provider: string) => ProviderAdapter | undefined
  /** The session manager's mode rule for the provider, or undefined when the mode may be asked for. */
  readonly modeRefusal: (provider: string, mode: OperatingMode) => string | undefined
  /** Fails `auth_required` when the provider is not logged in (the same rule as `session.start`). */
  readonly requireLogin: (provider: string) => Effect.Effect<void, CommandError>
  /** Starts the adapter session in its own scope and makes it live; its error, if it failed. */
  readonly launch: (
    startSession: ProviderAdapter["startSession"],
    input: Omit<StartSessionInput, "emit">,
    stamp: StartedStamp,
    lease: Lease | undefined
  ) => Effect.Effect<AdapterError | undefined>
}

/**
 * `thread.resume`: checks what is on record, then starts the thread's adapter on the recorded
 * home with the recorded native id. Concurrent calls for one thread share one attempt, so two
 * clients resuming at once start one provider process and get the same outcome.
 */
export const makeResume = (deps: ResumeDeps) => {
  const inFlight = new Map<string, Deferred.Deferred<ThreadResumeResult, CommandError | StoreError>>()

  const attempt = (threadId: ThreadId, mode: OperatingMode | undefined) =>
    Effect.gen(function* () {
      if (deps.isLive(threadId) || (yield* deps.liveElsewhere(threadId))) return { threadId, resumed: false }
      const target = yield* deps.targets.target(threadId)
      if (target === undefined)
        return yield* Effect.fail(commandError("unknown_thread", `no thread with id '${threadId}'`))
      const adapter = deps.adapterOf(target.provider)
      if (adapter === undefined) {
        const message = `thread '${threadId}' ran on '${target.provider}', which is not configured on this server`
        return yield* Effect.fail(commandError("unknown_provider", message))
      }
      const refused = resumeRefusal(target)
      if (refused !== undefined) return yield* Effect.fail(refused)
      const nativeId = target.nativeId!
      const recorded = target.providerHome
      // A home that is not here (another replica's data dir, or one deleted) is restored from
      // the store into one of ours, when its state was captured there.
      const missing = recorded !== undefined && !(yield* deps.homes.exists(recorded))
      const restored = missing ? yield* deps.restore(threadId, target.provider) : undefined
      if (missing && restored === undefined) {
        const message =
          `the ${target.provider} state of thread '${threadId}' is gone (${recorded}) and none is stored; ` +
          "it stays readable, start a new session"
        return yield* Effect.fail(commandError("resume_failed", message))
      }
      const home = restored ?? recorded
      const resumeMode = mode ?? target.mode ?? "default"
      const refusal = deps.modeRefusal(target.provider, resumeMode)
      if (refusal !== undefined) return yield* Effect.fail(commandError("unsupported", refusal))
      yield* deps.requireLogin(target.provider)
      const lease = yield* deps.claim(threadId)
      const start = { threadId, cwd: target.cwd!, mode: resumeMode, resumeNativeSessionId: nativeId }
      const failure = yield* deps.launch(
        adapter.startSession,
        { ...start, ...definedFields({ home }) },
        { resumedFrom: nativeId, ...definedFields({ providerHome: home }) },
        lease
      )
      if (failure === undefined) return { threadId, resumed: true, resumedFrom: nativeId }
      yield* deps.release(lease)
      if (restored !== undefined) yield* deps.homes.remove(restored)
      if (failure.stderr !== undefined)
        yield* Effect.logWarning(
          `${target.provider} failed to resume thread '${threadId}'; its stderr: ${failure.stderr}`
        )
      if (failure.reason._tag === "Unsupported") return yield* Effect.fail(providerRefused(failure))
      const message =
        `${target.provider} could not resume session '${nativeId}' of thread '${threadId}': ` +
        `${failure.message}; the thread stays readable`
      return yield* Effect.fail(commandError("resume_failed", message, undefined, { cause: failure }))
    })

  return (threadId: ThreadId, mode?: OperatingMode) =>
    Effect.suspend((): Effect.Effect<ThreadResumeResult, CommandError | StoreError> => {
      const running = inFlight.get(threadId)
      if (running !== undefined) return Deferred.await(running)
      const outcome = Deferred.makeUnsafe<ThreadResumeResult, CommandError | StoreError>()
      inFlight.set(threadId, outcome)
      // Uninterruptible: a client that disconnects must not leave the others waiting forever.
      return attempt(threadId, mode).pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => {
            inFlight.delete(threadId)
            Deferred.doneUnsafe(outcome, exit)
          })
        ),
        Effect.uninterruptible
      )
    })
}
