import { type OptionId, type OperatingMode, type PromptId, type RequestId, type TurnId } from "@planbridge/contracts"
import { randomUUID } from "node:crypto"
import { Deferred, Effect, type Scope } from "effect"
import { AdapterError, failAdapter, type PlanDecisionInput, type ProviderSession } from "../ProviderAdapter.ts"
import { makeJobQueue } from "../kernel/JobQueue.ts"
import { makeAcpSessionEvents } from "./sessionEvents.ts"
import type { AcpSessionInput, AcpSessionOptions } from "./sessionOptions.ts"
import { makeAcpInbound } from "./sessionInbound.ts"
import { initializeAgent, openAgentSession } from "./handshake.ts"
import { answerReply, dismissReply, planReply, promptNotPending, requestReply } from "./decisions.ts"
import type { Pending, Reply } from "./pending.ts"
import { cancelReply } from "./pending.ts"
import { AcpTranslator } from "./translator.ts"
import { spawnAcpTransport, type AcpTransport, type ChildExit } from "./transport.ts"
import { definedFields } from "../../util/definedFields.ts"
import type { CheckedAnswer } from "../kernel/CheckedAnswer.ts"

export type { AcpSessionInput, AcpSessionOptions } from "./sessionOptions.ts"

/**
 * One ACP session over one agent process. Every state change (an inbound message, a user
 * answer, a turn start or end) runs as a job on a single queue: the translator's state and the
 * order of emitted events are never interleaved, and an answer's resolution events are emitted
 * before its native response is written.
 */
export const startAcpSession = (
  options: AcpSessionOptions,
  input: AcpSessionInput
): Effect.Effect<ProviderSession, AdapterError, Scope.Scope> =>
  Effect.gen(function* () {
    const { profile } = options
    const timeout = options.requestTimeoutMs ?? 60_000
    if (profile.auth !== undefined && !profile.auth.env.some((name) => (options.env[name] ?? "").length > 0)) {
      return yield* failAdapter(
        "start_failed",
        `${profile.label} needs credentials: set ${profile.auth.env.join(" or ")} in its environment`
      )
    }

    const idPrefix = options.idPrefix ?? `${input.threadId}:${randomUUID().slice(0, 8)}`
    const translator = new AcpTranslator(profile, idPrefix)
    const jobs = yield* makeJobQueue(`acp ${profile.provider}`)
    const { exclusive } = jobs
    const scope = yield* Effect.scope
    const exitProcessed = yield* Deferred.make<void>()
    let exitedWith: ChildExit | undefined

    const events = makeAcpSessionEvents({
      profile,
      threadId: input.threadId,
      idPrefix,
      emit: input.emit
    })

    const { emitAll, translate, emitFrom } = events

    const logged = (effect: Effect.Effect<void, AdapterError>): Effect.Effect<void> =>
      effect.pipe(Effect.catch((error) => Effect.logWarning(`acp ${profile.provider}: ${error.message}`)))

    // The transport exists only after spawning, but its callbacks are wired before that.
    const wired: { transport?: AcpTransport } = {}
    const settle = (id: string | number, reply: Reply) => wired.transport?.settle(id, reply)

    const { onInbound, onExit } = makeAcpInbound({
      translator,
      events,
      jobs,
      logged,
      settle,
      transport: () => wired.transport,
      exited: (exit) => {
        exitedWith = exit
      },
      exitProcessed
    })

    const agent = yield* spawnAcpTransport({
      command: profile.command,
      args: profile.args,
      cwd: input.cwd,
      env: options.env,
      onInbound,
      onExit,
      ...definedFields({ tap: options.tap }),
      ...definedFields({ probe: options.probe })
    })
    wired.transport = agent
    // A job that dies (a defect in an emit callback) must not stop every later job.
    yield* jobs.start
    // Runs before the processor is interrupted: kill the agent, then let its exit be mapped.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        yield* agent.shutdown
        yield* Deferred.await(exitProcessed).pipe(Effect.timeoutOption(3000))
      })
    )

    const alive = Effect.suspend(() =>
      exitedWith === undefined
        ? Effect.void
        : failAdapter("provider_exited", `${profile.label} exited (${exitedWith.code ?? exitedWith.signal})`)
    )

    // ---- handshake -------------------------------------------------------------------
    const resumed = input.resumeNativeSessionId !== undefined
    const initialize = yield* initializeAgent(agent, profile, timeout, resumed)
    const sessionId = yield* openAgentSession({
      agent,
      profile,
      translator,
      initialize,
      cwd: input.cwd,
      resumeNativeSessionId: input.resumeNativeSessionId,
      timeoutMs: timeout,
      configure: (job, record, done) =>
        jobs.enqueue(Effect.andThen(Effect.sync(record), logged(job)).pipe(Effect.ensuring(done))),
      emitFrom
    })

    // ---- operations ------------------------------------------------------------------
    const answer = (p: Pending, reply: Reply): Effect.Effect<void, AdapterError> =>
      Effect.gen(function* () {
        const drafts = translate("answer", reply, () => translator.clientResponse(p.nativeId, reply))
        // Not persisted, not sent: the request stays pending and the caller may retry.
        yield* emitAll(drafts).pipe(Effect.tapError(() => Effect.sync(() => translator.pending.restore(p))))
        settle(p.nativeId, reply)
      })

    const setMode = (mode: OperatingMode): Effect.Effect<void, AdapterError> =>
      Effect.gen(function* () {
        yield* alive
        const request = yield* exclusive(
          Effect.sync(() => (translator.mode === mode ? "same" : translator.modeRequest(mode)))
        )
        if (request === "same") return
        if (request === undefined)
          return yield* failAdapter("unsupported", `${profile.label} offers no mode for '${mode}' in this session`)
        // The reply is translated at its place in the stream (codex-acp answers before it
        // echoes config_option_update, Cursor after current_mode_update), then awaited here.
        const applied = yield* Deferred.make<void>()
        const onReply = (reply: Reply, record: () => void) => {
          const job =
            "result" in reply
              ? emitFrom(request.method, reply.result, () =>
                  translator.modeSet(request.method, request.nativeMode, reply.result)
                )
              : Effect.void
          jobs.enqueue(
            Effect.andThen(Effect.sync(record), logged(job)).pipe(Effect.ensuring(Deferred.succeed(applied, undefined)))
          )
        }
        yield* agent.request(request.method, request.params, { timeoutMs: timeout, onReply })
        yield* Deferred.await(applied)
      })

    const finishTurn = (
      outcome: { readonly result: unknown } | { readonly error: { readonly message: string; readonly code?: number } }
    ): Effect.Effect<void, AdapterError> =>
      Effect.gen(function* () {
        if (translator.activeTurnId === undefined) return
        let replies: ReadonlyArray<{ readonly id: string | number; readonly reply: Reply }> = []
        const drafts = translate("session/prompt", outcome, () => {
          const finished = translator.promptFinished(outcome)
          replies = finished.replies
          return finished.drafts
        })
        yield* emitAll(drafts)
        for (const { id, reply } of replies) settle(id, reply)
      })

    const startTurn = (turn: {
      readonly text: string
      readonly mode?: OperatingMode
    }): Effect.Effect<TurnId, AdapterError> =>
      Effect.gen(function* () {
        yield* alive
        const busy = Effect.suspend(() =>
          translator.activeTurnId !== undefined
            ? failAdapter("busy", "a turn is already running")
            : translator.pending.all().some((p) => p.kind === "question")
              ? failAdapter("busy", "a blocking question is pending")
              : Effect.void
        )
        yield* exclusive(busy)
        if (turn.mode !== undefined) yield* setMode(turn.mode)
        return yield* exclusive(
          Effect.gen(function* () {
            yield* busy
            const turnId = translator.nextTurnId()
            const params = { sessionId, prompt: [{ type: "text", text: turn.text }] }
            yield* emitAll(translator.startTurn(turnId, translator.mode, params))
            // The turn ends at the reply's place in the stream, after every update before it.
            let replied = false
            const onReply = (reply: Reply, record: () => void) => {
              replied = true
              const outcome =
                "result" in reply
                  ? { result: reply.result }
                  : { error: { message: reply.error.message, code: reply.error.code } }
              jobs.enqueue(Effect.andThen(Effect.sync(record), logged(finishTurn(outcome))))
            }
            yield* Effect.forkIn(
              agent.request("session/prompt", params, { onReply }).pipe(
                Effect.catch((error) =>
                  // No reply at all: an exited agent is reported by its exit; anything else ends the turn here.
                  replied || error.reason === "provider_exited"
                    ? Effect.void
                    : Effect.sync(() => jobs.enqueue(logged(finishTurn({ error: { message: error.message } }))))
                )
              ),
              scope
            )
            return turnId
          })
        )
      })

    const interrupt = (): Effect.Effect<void, AdapterError> =>
      exclusive(
        Effect.gen(function* () {
          const turnId = translator.activeTurnId
          if (turnId === undefined) return
          yield* agent.notify("session/cancel", { sessionId })
          // ACP leaves answering the agent's open requests to the client after a cancel.
          for (const p of translator.pending.all()) {
            if (p.turnId === turnId || p.turnId === undefined) yield* answer(p, cancelReply(p))
          }
        })
      )

    /** Answers `p` with `reply`, or fails with why it cannot be answered so. */
    const answerWith = (p: Pending, reply: Reply | AdapterError) =>
      reply instanceof AdapterError ? Effect.fail(reply) : answer(p, reply)

    const respondToRequest = (requestId: RequestId, optionId: OptionId): Effect.Effect<void, AdapterError> =>
      exclusive(
        Effect.suspend(() => {
          const p = translator.pending.byRequestId(requestId)
          if (p === undefined) return failAdapter("request_not_pending", `request ${requestId} is not pending`)
          return answerWith(p, requestReply(p, requestId, optionId))
        })
      )

    const respondToUserInput = (checked: CheckedAnswer): Effect.Effect<void, AdapterError> =>
      exclusive(
        Effect.suspend(() => {
          const p = translator.pending.byPromptId(checked.answer.promptId)
          if (p === undefined) return Effect.fail(promptNotPending(checked.answer.promptId))
          return answerWith(p, answerReply(p, checked))
        })
      )

    const dismissUserInput = (
      promptId: PromptId,
      resolution: "empty" | "cancelled"
    ): Effect.Effect<void, AdapterError> =>
      exclusive(
        Effect.suspend(() => {
          const p = translator.pending.byPromptId(promptId)
          if (p === undefined) return Effect.fail(promptNotPending(promptId))
          return answer(p, dismissReply(p, resolution))
        })
      )

    const decidePlan = (decision: PlanDecisionInput): Effect.Effect<void, AdapterError> =>
      exclusive(
        Effect.suspend(() => {
          const p = translator.pending.byPlanId(decision.planId)
          if (p === undefined)
            return failAdapter("request_not_pending", `plan ${decision.planId} is not awaiting a decision`)
          return answerWith(p, planReply(p, decision, profile.label))
        })
      )

    if (input.mode !== translator.mode) yield* setMode(input.mode)

    const session: ProviderSession = {
      provider: profile.provider,
      threadId: input.threadId,
      capabilities: Effect.sync(() => translator.capabilities),
      mode: Effect.sync(() => translator.mode),
      startTurn,
      interrupt,
      setMode,
      respondToUserInput,
      dismissUserInput,
      respondToRequest,
      decidePlan
    }
    return session
  })
