import {
  type OperatingMode,
  type OptionId,
  type PromptId,
  type ProviderKind,
  type RequestId,
  type ResolvedBy,
  type ThreadId,
  type UserInputAnswerEntry,
  type WaitPolicy
} from "@planbridge/contracts"
import { Context, Effect, Layer, Option, Semaphore } from "effect"
import { randomUUID } from "node:crypto"
import { AnswerTargets } from "../persistence/AnswerTargets.ts"
import { ClientRequestStore } from "../persistence/ClientRequestStore.ts"
import { RecoveryQueries } from "../persistence/RecoveryQueries.ts"
import { ProviderStates } from "../persistence/ProviderStates.ts"
import { ResumeTargets } from "../persistence/ResumeTargets.ts"
import { SessionLeases } from "../persistence/SessionLeases.ts"
import type { StoreError } from "../persistence/StoreError.ts"
import { ThreadReads } from "../persistence/ThreadReads.ts"
import { failAdapter, type AdapterError, type ProviderSession } from "../provider/ProviderAdapter.ts"
import { definedFields } from "../util/definedFields.ts"
import { recallOutcome, rememberOutcome, type ClientRequest, type ResolutionOutcome } from "./ClientRequests.ts"
import { alreadyResolved, commandError, providerRefused, type CommandError } from "./CommandErrors.ts"
import { endAbandonedSessions } from "./AbandonedSessions.ts"
import { makeResolutionAttribution, type ResolutionTarget } from "./ResolutionAttribution.ts"
import { makeLiveSessions, type LiveSession } from "./LiveSessions.ts"
import { modeRefusal } from "./ModeRule.ts"
import { makeModeSwitchCheck } from "./ModeSwitch.ts"
import { ProviderRegistry } from "./ProviderRegistry.ts"
import { RuntimeIngestion } from "./RuntimeIngestion.ts"
import { SessionHomes } from "./SessionHomes.ts"
import { makeProviderStateKeeping } from "./ProviderStateKeeping.ts"
import { makeResume, notLive, resumeRefusal, type ThreadResumeResult } from "./ThreadResume.ts"
import { checkAnswer } from "../provider/kernel/CheckedAnswer.ts"
import { startReplicaDuties } from "./ReplicaDuties.ts"
import { makeReplicaRouting } from "./ReplicaRouting.ts"
import { routeSessionCommands, type PlanDecision, type SessionCommands } from "./RoutedCommands.ts"
import { takeOverExpired } from "./StartupRecovery.ts"
import { runWaitPolicies, serverWaitPolicy } from "./WaitPolicies.ts"

export type { ResolutionOutcome } from "./ClientRequests.ts"
export type { ThreadResumeResult } from "./ThreadResume.ts"
export type { PlanDecision } from "./RoutedCommands.ts"

/** A refused command, or a store that failed while the command was checked or recorded. */
export type SessionError = CommandError | StoreError

/**
 * Live provider sessions and the commands clients send them. Answers are serialized through
 * one permit: two clients answering the same prompt race for it, exactly one reaches the
 * provider, the other is told `already_resolved`. A retried command with the same
 * `clientRequestId` gets the first outcome again and sends nothing, also after a restart: the
 * outcomes are stored, with what they were for, so the id reused for anything else is refused.
 * Modes follow one rule (`modeRefusal`) wherever they are asked for, and never switch mid-turn.
 * With replicas (PostgreSQL), a session runs under its thread's lease, and the commands on it
 * (`SessionCommands`) are relayed to the replica that holds it (RoutedCommands.ts).
 */
export class SessionManager extends Context.Service<
  SessionManager,
  SessionCommands & {
    readonly startSession: (input: {
      provider: ProviderKind
      cwd: string
      mode: OperatingMode
      /** What the server does with its unanswered questions; default the server's (WaitPolicies.ts). */
      waitPolicy?: WaitPolicy
      /** A new thread on this native session of the provider (`threads import`), not a new one. */
      resumeNativeSessionId?: string
    }) => Effect.Effect<{ threadId: ThreadId }, SessionError>
    /**
     * Attaches a new provider session to a thread that is not live, resuming its native
     * conversation. Concurrent resumes of one thread share one attempt (one provider process).
     */
    readonly resumeSession: (
      threadId: ThreadId,
      mode?: OperatingMode
    ) => Effect.Effect<ThreadResumeResult, SessionError>
    readonly isLive: (threadId: string) => boolean
    readonly closeAll: Effect.Effect<void>
  }
>()("planbridge/SessionManager") {
  static readonly make = Effect.gen(function* () {
    const registry = yield* ProviderRegistry
    const ingestion = yield* RuntimeIngestion
    const threads = yield* ThreadReads
    const targets = yield* AnswerTargets
    const clientRequests = yield* ClientRequestStore
    const resumeTargets = yield* ResumeTargets
    const homes = yield* SessionHomes
    const live = new Map<string, LiveSession>()
    /** The wait policy a session was started with (`session.start`), by thread; kept while this server runs. */
    const waitPolicies = new Map<string, WaitPolicy>()
    const answering = yield* Semaphore.make(1)
    const { routing, leases } = yield* makeReplicaRouting((threadId) => live.has(threadId))
    const attribution = makeResolutionAttribution()
    // Isolated homes in the store (issue 32): a PostgreSQL replica store provides ProviderStates.
    const keeping = yield* makeProviderStateKeeping({
      states: Option.getOrUndefined(yield* Effect.serviceOption(ProviderStates)),
      targets: resumeTargets,
      homes,
      homeFor: (provider, threadDir) => registry.get(provider)?.adapter.homeFor?.(threadDir)
    })
    const { retire, claimLease, releaseLease, launch, closeAll } = makeLiveSessions({
      live,
      ingestion,
      leases,
      attribution,
      capture: keeping.capture
    })
    yield* endAbandonedSessions({ ingestion, live, retire })
    const recoveryQueries = yield* RecoveryQueries
    /** Replicas: closes what dead replicas left on the threads whose lease expired. */
    const takeOver =
      leases === undefined
        ? Effect.void
        : Effect.asVoid(takeOverExpired).pipe(
            Effect.provideService(SessionLeases, leases),
            Effect.provideService(RuntimeIngestion, ingestion),
            Effect.provideService(RecoveryQueries, recoveryQueries)
          )

    const sessionOf = (threadId: string): Effect.Effect<ProviderSession, SessionError> =>
      Effect.suspend(() => {
        const found = live.get(threadId)
        if (found !== undefined) return Effect.succeed(found.session)
        return Effect.flatMap(resumeTargets.target(threadId), (target) =>
          Effect.fail(
            target === undefined
              ? commandError("unknown_thread", `no thread with id '${threadId}'`)
              : notLive(threadId, resumeRefusal(target) === undefined && registry.get(target.provider) !== undefined)
          )
        )
      })

    /**
     * Runs an answer-like command once per client request id, one at a time: an identical retry
     * gets the stored outcome, the id reused for anything else `client_request_conflict`.
     */
    const once = (request: ClientRequest, run: Effect.Effect<ResolutionOutcome, SessionError>) =>
      answering.withPermits(1)(
        Effect.flatMap(recallOutcome(clientRequests, request), (previous) =>
          previous !== undefined
            ? Effect.succeed(previous)
            : Effect.flatMap(run, (outcome) => rememberOutcome(clientRequests, request, outcome))
        )
      )

    const checkModeSwitch = makeModeSwitchCheck(threads)

    const pendingPrompt = (promptId: string) =>
      Effect.flatMap(targets.prompt(promptId), (target) => {
        if (target === undefined) return Effect.fail(commandError("unknown_prompt", `no prompt with id '${promptId}'`))
        if (target.status !== "pending") return Effect.fail(alreadyResolved())
        return Effect.succeed(target)
      })

    /**
     * A CLI that is not logged in would fail its first turn (Claude) or hang in retries: a session
     * (new or resumed) on it is refused before anything starts.
     */
    const requireLogin = (provider: ProviderKind) =>
      Effect.gen(function* () {
        const auth = yield* registry.authForSession(provider)
        if (auth?.status !== "unauthenticated") return
        const name = registry.get(provider)?.label ?? provider
        const message = `${name} is not logged in${auth.hint === undefined ? "" : `: ${auth.hint}`}`
        return yield* Effect.fail(commandError("auth_required", message))
      })

    const startSession = (input: {
      provider: ProviderKind
      cwd: string
      mode: OperatingMode
      waitPolicy?: WaitPolicy
      resumeNativeSessionId?: string
    }) =>
      Effect.gen(function* () {
        const registered = registry.get(input.provider)
        if (registered === undefined)
          return yield* Effect.fail(
            commandError("unknown_provider", `no provider '${input.provider}' is configured on this server`)
          )
        // Refused before anything starts: no thread claims a mode its provider does not have.
        const refusal = modeRefusal(input.provider, registered.capabilities, input.mode)
        if (refusal !== undefined) return yield* Effect.fail(commandError("unsupported", refusal))
        yield* requireLogin(input.provider)
        const threadId = randomUUID() as ThreadId
        if (input.waitPolicy !== undefined) waitPolicies.set(threadId, input.waitPolicy)
        const providerHome = registered.adapter.homeFor?.(homes.dirFor(threadId))
        if (providerHome !== undefined && homes.owns(providerHome)) {
          const cannot = (error: Error) =>
            commandError("provider_error", `cannot start a ${input.provider} session: ${error.message}`, undefined, {
              cause: error
            })
          yield* Effect.mapError(homes.prepare(providerHome), cannot)
        }
        const resumeNativeSessionId = input.resumeNativeSessionId
        const start = {
          threadId,
          cwd: input.cwd,
          mode: input.mode,
          ...definedFields({ home: providerHome, resumeNativeSessionId })
        }
        const lease = yield* claimLease(threadId)
        const stamp = definedFields({ providerHome, resumedFrom: resumeNativeSessionId })
        const failure = yield* launch(registered.adapter.startSession, start, stamp, lease)
        if (failure !== undefined) {
          yield* releaseLease(lease)
          // No session ever ran on it: nothing will resume from it.
          if (providerHome !== undefined) yield* homes.remove(providerHome)
          if (failure.reason._tag === "Unsupported") return yield* Effect.fail(providerRefused(failure))
          const stderr = failure.stderr === undefined ? "" : `; agent stderr: ${failure.stderr}`
          const message = `cannot start a ${input.provider} session: ${failure.message}${stderr}`
          return yield* Effect.fail(commandError("provider_error", message, undefined, { cause: failure }))
        }
        return { threadId }
      })

    const resumeSession = makeResume({
      isLive: (threadId) => live.has(threadId),
      liveElsewhere: (threadId) =>
        leases === undefined
          ? Effect.succeed(false)
          : Effect.map(leases.ownerElsewhere(threadId), (o) => o !== undefined),
      // What a replica that died left pending on the thread is closed first (its lease expired).
      claim: (threadId) => Effect.andThen(Effect.ignore(takeOver), claimLease(threadId)),
      release: releaseLease,
      targets: resumeTargets,
      homes,
      restore: keeping.restore,
      adapterOf: (provider) => registry.get(provider)?.adapter,
      modeRefusal: (provider, mode) => {
        const registered = registry.get(provider)
        return registered === undefined ? undefined : modeRefusal(provider, registered.capabilities, mode)
      },
      requireLogin,
      launch
    })

    const on = <A>(threadId: string, f: (session: ProviderSession) => Effect.Effect<A, AdapterError>) =>
      Effect.flatMap(sessionOf(threadId), (session) => Effect.mapError(f(session), providerRefused))

    /**
     * `on`, for a command that resolves `targets` on behalf of `by`: the session's resolution
     * events record it (ResolutionAttribution.ts); a command that fails withdraws it.
     */
    const resolving = <A>(
      threadId: string,
      targets: ReadonlyArray<ResolutionTarget>,
      by: ResolvedBy,
      f: (session: ProviderSession) => Effect.Effect<A, AdapterError>
    ) =>
      Effect.suspend(() => {
        const withdraw = attribution.expect(targets, by)
        return Effect.onError(on(threadId, f), () => Effect.sync(withdraw))
      })
    const promptTargets = (row: { readonly promptId: string; readonly requestId: string | null }) =>
      row.requestId === null ? [{ prompt: row.promptId }] : [{ prompt: row.promptId }, { request: row.requestId }]

    /** The commands on a session of this replica (or the reason it has none); `routing` decides. */
    const local: SessionCommands = {
      startTurn: (threadId: ThreadId, text: string, mode?: OperatingMode) =>
        Effect.gen(function* () {
          const session = yield* sessionOf(threadId)
          if (mode !== undefined) yield* checkModeSwitch(threadId, session, mode)
          const turn = mode === undefined ? { text } : { text, mode }
          const turnId = yield* Effect.mapError(session.startTurn(turn), providerRefused)
          return { turnId }
        }),
      interrupt: (threadId: ThreadId, by: ResolvedBy) =>
        Effect.gen(function* () {
          // What the interrupt cancels (a question, an approval) is the interrupter's doing, not the provider's.
          const snapshot = yield* threads.snapshot(threadId)
          const pending: ReadonlyArray<ResolutionTarget> =
            snapshot === undefined
              ? []
              : [
                  ...snapshot.prompts.flatMap((p) => (p.status === "pending" ? [{ prompt: p.promptId }] : [])),
                  ...snapshot.requests.flatMap((r) => (r.status === "pending" ? [{ request: r.requestId }] : []))
                ]
          yield* resolving(threadId, pending, by, (s) => s.interrupt())
          return { interrupted: true as const }
        }),
      setMode: (threadId: ThreadId, mode: OperatingMode) =>
        Effect.gen(function* () {
          const session = yield* sessionOf(threadId)
          yield* checkModeSwitch(threadId, session, mode)
          yield* Effect.mapError(session.setMode(mode), providerRefused)
          return { mode }
        }),
      respondToUserInput: (
        promptId: PromptId,
        answers: ReadonlyArray<UserInputAnswerEntry>,
        clientRequestId: string,
        by: ResolvedBy
      ) =>
        once(
          { clientRequestId, command: "userInput.respond", target: promptId, payload: { answers } },
          Effect.gen(function* () {
            const row = yield* pendingPrompt(promptId)
            const answer = { promptId, answers }
            // The one validation of an answer, against the prompt as it was stored (kernel).
            const checked = checkAnswer(row.prompt, answer)
            if (!checked.ok)
              return yield* Effect.fail(commandError("invalid_answer", checked.error.message, checked.error.path))
            yield* resolving(row.threadId, promptTargets(row), by, (s) => s.respondToUserInput(checked.checked))
            return { promptId, status: "resolved" as const }
          })
        ),
      dismissUserInput: (
        promptId: PromptId,
        resolution: "empty" | "cancelled",
        clientRequestId: string,
        by: ResolvedBy
      ) =>
        once(
          { clientRequestId, command: "userInput.dismiss", target: promptId, payload: { resolution } },
          Effect.gen(function* () {
            const row = yield* pendingPrompt(promptId)
            yield* resolving(row.threadId, promptTargets(row), by, (s) => s.dismissUserInput(promptId, resolution))
            return { promptId, status: "resolved" as const }
          })
        ),
      respondToRequest: (requestId: RequestId, optionId: OptionId, clientRequestId: string, by: ResolvedBy) =>
        once(
          { clientRequestId, command: "request.respond", target: requestId, payload: { optionId } },
          Effect.gen(function* () {
            const row = yield* targets.request(requestId)
            if (row === undefined) {
              return yield* Effect.fail(commandError("unknown_request", `no request with id '${requestId}'`))
            }
            if (row.status !== "pending") {
              return yield* Effect.fail(alreadyResolved())
            }
            yield* resolving(row.threadId, [{ request: requestId }], by, (s) => s.respondToRequest(requestId, optionId))
            return { requestId, status: "resolved" as const }
          })
        ),
      decidePlan: (input: PlanDecision, clientRequestId: string, by: ResolvedBy) =>
        once(
          { clientRequestId, command: "plan.decide", target: input.planId, payload: input },
          Effect.gen(function* () {
            const { threadId, ...decision } = input
            yield* resolving(threadId, [{ plan: input.planId }], by, (s) =>
              Effect.gen(function* () {
                // A review choice only where the session offers the agent's own (`supportsPlanOptions`).
                if (decision.optionId !== undefined && (yield* s.capabilities).supportsPlanOptions !== true)
                  return yield* failAdapter("unsupported", `${s.provider} offers no plan-review options`)
                return yield* s.decidePlan(decision)
              })
            )
            return { planId: input.planId, status: "resolved" as const }
          })
        )
    }

    const { routed, runRelayed } = routeSessionCommands(routing, targets, local, leases?.replicaId)
    // The policy timers of this replica's sessions (a session's own policy, else the server's).
    const serverPolicy = yield* serverWaitPolicy
    yield* runWaitPolicies({
      ingestion,
      isLocal: (threadId) => live.has(threadId),
      policyOf: (threadId) => waitPolicies.get(threadId) ?? serverPolicy,
      commands: local
    })
    if (leases !== undefined) yield* startReplicaDuties({ leases, routing, runRelayed, live, retire, takeOver })

    return SessionManager.of({
      startSession,
      resumeSession,
      ...routed,
      isLive: (threadId) => live.has(threadId) || (leases?.liveElsewhere(threadId) ?? false),
      closeAll
    })
  })

  /** Sessions are closed (provider processes killed) when the layer is released. */
  static readonly layer = Layer.effect(
    SessionManager,
    Effect.acquireRelease(SessionManager.make, (manager) => manager.closeAll)
  )
}
