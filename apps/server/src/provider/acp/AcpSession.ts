import type { OptionId, OperatingMode, PromptId, RequestId, TurnId } from "@planbridge/contracts"
import { randomUUID } from "node:crypto"
import { Effect, Fiber, type Scope } from "effect"
import { AdapterError, failAdapter, type PlanDecisionInput, type ProviderSession } from "../ProviderAdapter.ts"
import type { CheckedAnswer } from "../kernel/CheckedAnswer.ts"
import { makeSessionRunner } from "../kernel/SessionRunner.ts"
import type { TranscriptEntry } from "../kernel/transcript.ts"
import { makeLogBudget } from "../logBudget.ts"
import type { AcpSessionInput, AcpSessionOptions } from "./AcpSessionOptions.ts"
import { openAcpSession } from "./AcpHandshake.ts"
import { answerReply, dismissReply, planReply, requestReply } from "./AcpDecisions.ts"
import { planNotPending, promptNotPending, requestNotPending } from "../kernel/notPending.ts"
import { replyMessage, step } from "./AcpMapping.ts"
import { cancelReply } from "./AcpPendingResolution.ts"
import type { Pending, PermissionPending, PlanPending, QuestionPending, Reply } from "./AcpPendingTypes.ts"
import { initialAcpState, type AcpState } from "./AcpState.ts"
import { makeAcpTransport } from "./AcpTransport.ts"
import { acpModeRequest } from "./AcpTurns.ts"
import { definedFields } from "../../util/definedFields.ts"
import { isJsonRpcId, jsonRpcIdKey } from "../kernel/jsonRpcId.ts"
import { mapPeerLines, transportFailure } from "../kernel/JsonRpcPeer.ts"

export type { AcpSessionInput, AcpSessionOptions } from "./AcpSessionOptions.ts"

const isExit = (line: TranscriptEntry) =>
  line.dir === "local" && (line.msg as { readonly kind?: unknown } | null)?.kind === "exit"

/**
 * One ACP session over one agent process. Every line — an agent message, a message of ours, an
 * invalid line, the exit — goes through the mapping on the kernel's `SessionRunner`: its events
 * are recorded before anything is written to the agent, and an answer's resolution is durable
 * before the agent sees the answer. Event ids are `<idPrefix>:event:<n>`, as a replay gives them.
 */
export const makeAcpSession = (
  options: AcpSessionOptions,
  input: AcpSessionInput
): Effect.Effect<ProviderSession, AdapterError, Scope.Scope> =>
  Effect.gen(function* () {
    const { profile, tap } = options
    const timeout = options.requestTimeoutMs ?? 60_000
    if (profile.auth !== undefined && !profile.auth.env.some((name) => (options.env[name] ?? "").length > 0)) {
      return yield* failAdapter(
        "start_failed",
        `${profile.label} needs credentials: set ${profile.auth.env.join(" or ")} in its environment`
      )
    }
    const idPrefix = options.idPrefix ?? `${input.threadId}:${randomUUID().slice(0, 8)}`
    const agent = yield* makeAcpTransport({
      command: profile.command,
      args: profile.args,
      cwd: input.cwd,
      env: options.env,
      ...definedFields({ probe: options.probe })
    }).pipe(Effect.mapError(transportFailure))
    let seq = 0
    // Every warning is one event, but the log gets a rate-limited summary (logBudget.ts).
    const warningLog = makeLogBudget()
    const runner = yield* makeSessionRunner<AcpState, TranscriptEntry, unknown>({
      provider: profile.provider,
      threadId: input.threadId,
      initial: initialAcpState(profile, idPrefix),
      step,
      eventId: () => `${idPrefix}:event:${++seq}`,
      emit: input.emit,
      emitAll: input.emitAll,
      // Replies the mapping owes are recorded as they are written; a failed write is the agent's exit.
      write: (reply) =>
        Effect.andThen(
          Effect.sync(() => tap?.({ dir: "out", msg: reply })),
          Effect.ignore(agent.write(reply))
        ),
      // The exit is recorded by whoever records the transcript, from `session.exited`.
      record: (line) => (isExit(line) ? undefined : tap?.(line)),
      emitted: (event) =>
        event.type !== "runtime.warning"
          ? Effect.void
          : warningLog((dropped) =>
              Effect.logWarning(
                `acp ${profile.provider}: ${event.payload.code}: ${event.payload.message}` +
                  (dropped > 0 ? ` (${dropped} earlier warnings of this session not logged)` : "")
              )
            )
    })

    /**
     * Our answer `reply` to `p`, mapped (its resolution recorded) first, then written. Strict (a
     * person's answer): if its resolution cannot be recorded, nothing is sent and `p` stays pending.
     */
    const answer = (p: Pending, reply: Reply, notPending: AdapterError, strict = true) =>
      runner.apply(
        { dir: "out", msg: replyMessage(p.nativeId, reply) },
        {
          guard: (s) => (s.pending.get(jsonRpcIdKey(p.nativeId)) === p ? undefined : notPending),
          ...(strict ? { strict: { rollback: () => undefined } } : {}),
          after: Effect.ignore(agent.write(replyMessage(p.nativeId, reply)))
        }
      )
    /** Agent requests whose events could not be recorded: nobody can see them, so they are cancelled after their burst. */
    const unseen: Array<Pending> = []
    const unrecorded = (line: TranscriptEntry) => (state: AcpState) => {
      const msg = line.msg as { readonly id?: unknown; readonly method?: unknown }
      const id = line.dir === "in" && typeof msg.method === "string" ? msg.id : undefined
      const pending = isJsonRpcId(id) ? state.pending.get(jsonRpcIdKey(id)) : undefined
      if (pending !== undefined) unseen.push(pending)
      return []
    }
    const cancelUnseen = Effect.suspend(() =>
      Effect.forEach(
        unseen.splice(0),
        (p) => Effect.ignore(answer(p, cancelReply(p), requestNotPending(p.requestId), false)),
        { discard: true }
      )
    )
    // The single reader: the agent's lines are mapped strictly in stream order.
    const reader = yield* Effect.forkScoped(
      mapPeerLines(
        agent,
        (lines) =>
          Effect.andThen(
            runner.applyAll(lines, (line) => ({ unrecorded: unrecorded(line) })),
            cancelUnseen
          ),
        isExit
      )
    )
    // Runs before the reader is interrupted: end the agent, then let its exit be mapped.
    yield* Effect.addFinalizer(() =>
      Effect.andThen(agent.shutdown, Fiber.await(reader).pipe(Effect.timeoutOption(3000)))
    )

    const stderrNote = () => {
      const stderr = agent.stderr()
      return stderr.length > 0 ? `; agent stderr: ${stderr.slice(-600)}` : ""
    }
    /** A message of ours: mapped (and recorded) first, then written. */
    const send = (msg: object) =>
      runner.apply({ dir: "out", msg }, { after: Effect.mapError(agent.write(msg), transportFailure) })
    /** A request of ours; its result once the agent's response is mapped. */
    const call = (method: string, params: unknown) =>
      Effect.gen(function* () {
        const request = agent.prepareRequest(method, params)
        yield* send(request.msg)
        const response = request.response.pipe(
          Effect.mapError(
            (e) => new AdapterError({ reason: e.reason, message: `${method} failed: ${e.message}${stderrNote()}` })
          )
        )
        return yield* Effect.timeoutOrElse(response, {
          duration: timeout,
          orElse: () => failAdapter("timeout", `${method}: no answer within ${timeout} ms`)
        })
      })

    const alive = Effect.suspend(() =>
      agent.isAlive() ? Effect.void : failAdapter("provider_exited", `${profile.label} has exited`)
    )

    yield* openAcpSession({ call, profile, cwd: input.cwd, resumeNativeSessionId: input.resumeNativeSessionId })
    const sessionId = runner.peek().nativeSessionId
    if (sessionId === undefined)
      return yield* failAdapter("protocol", `${profile.label}: no sessionId in the session/new response`)

    // ---- operations ------------------------------------------------------------------
    const setMode = (mode: OperatingMode): Effect.Effect<void, AdapterError> =>
      Effect.gen(function* () {
        yield* alive
        const state = yield* runner.state
        if (state.modes.mode === mode) return
        const request = acpModeRequest(state, mode)
        if (request === undefined)
          return yield* failAdapter("unsupported", `${profile.label} offers no mode for '${mode}' in this session`)
        // The reply is mapped at its place in the stream (codex-acp answers before it echoes
        // config_option_update, Cursor after current_mode_update), then awaited here.
        yield* call(request.method, request.params)
      })

    const busy = (s: AcpState) =>
      s.turnId !== undefined
        ? new AdapterError({ reason: "busy", message: "a turn is already running" })
        : [...s.pending.values()].some((p) => p.kind === "question")
          ? new AdapterError({ reason: "busy", message: "a blocking question is pending" })
          : undefined

    const startTurn = (turn: {
      readonly text: string
      readonly mode?: OperatingMode
    }): Effect.Effect<TurnId, AdapterError> =>
      Effect.gen(function* () {
        yield* alive
        const refused = busy(yield* runner.state)
        if (refused !== undefined) return yield* Effect.fail(refused)
        if (turn.mode !== undefined) yield* setMode(turn.mode)
        // Not awaited: the turn ends when the prompt's response is mapped, after every update before it.
        const request = agent.prepareRequest("session/prompt", {
          sessionId,
          prompt: [{ type: "text", text: turn.text }]
        })
        let turnId: TurnId | undefined
        yield* runner.apply(
          { dir: "out", msg: request.msg },
          {
            guard: busy,
            after: Effect.andThen(
              Effect.sync(() => (turnId = runner.peek().turnId)),
              Effect.ignore(agent.write(request.msg))
            )
          }
        )
        return turnId ?? (yield* failAdapter("protocol", "the prompt started no turn"))
      })

    const interrupt = (): Effect.Effect<void, AdapterError> =>
      Effect.gen(function* () {
        const turnId = (yield* runner.state).turnId
        if (turnId === undefined) return
        yield* send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } })
        // ACP leaves answering the agent's open requests to the client after a cancel.
        for (const p of runner.peek().pending.values()) {
          if (p.turnId === turnId || p.turnId === undefined)
            yield* answer(p, cancelReply(p), requestNotPending(p.requestId)).pipe(
              Effect.catchIf(
                (e) => e.reason === "request_not_pending",
                () => Effect.void
              )
            )
        }
      })

    /** Answers the open request `found` picks with what `reply` makes of it, or fails with `notPending`. */
    const answerFound = <P extends Pending>(
      found: (p: Pending) => p is P,
      notPending: AdapterError,
      reply: (p: P) => Reply | AdapterError
    ): Effect.Effect<void, AdapterError> =>
      Effect.suspend(() => {
        const p = [...runner.peek().pending.values()].find(found)
        const answered = p === undefined ? notPending : reply(p)
        return answered instanceof AdapterError
          ? Effect.fail(answered)
          : Effect.asVoid(answer(p!, answered, notPending))
      })
    const question =
      (promptId: string) =>
      (p: Pending): p is QuestionPending =>
        p.kind === "question" && p.prompt.promptId === promptId
    const respondToRequest = (requestId: RequestId, optionId: OptionId) =>
      answerFound(
        (p): p is Pending => p.requestId === requestId,
        requestNotPending(requestId),
        (p) => requestReply(p, requestId, optionId)
      )
    const respondToUserInput = (checked: CheckedAnswer) =>
      answerFound(question(checked.answer.promptId), promptNotPending(checked.answer.promptId), (p) =>
        answerReply(p, checked)
      )
    const dismissUserInput = (promptId: PromptId, resolution: "empty" | "cancelled") =>
      answerFound(question(promptId), promptNotPending(promptId), (p) => dismissReply(p, resolution))
    const decidePlan = (decision: PlanDecisionInput) =>
      answerFound(
        (p): p is PermissionPending | PlanPending => p.kind !== "question" && p.planId === decision.planId,
        planNotPending(decision.planId),
        (p) => planReply(p, decision, profile.label)
      )

    if (input.mode !== runner.peek().modes.mode) yield* setMode(input.mode)

    return {
      provider: profile.provider,
      threadId: input.threadId,
      capabilities: Effect.sync(() => runner.peek().capabilities),
      mode: Effect.sync(() => runner.peek().modes.mode),
      startTurn,
      interrupt,
      setMode,
      respondToUserInput,
      dismissUserInput,
      respondToRequest,
      decidePlan
    } satisfies ProviderSession
  })
