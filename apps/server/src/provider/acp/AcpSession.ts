import type { OperatingMode, TurnId } from "@planbridge/contracts"
import { Effect, Fiber, type Scope } from "effect"
import type { FlowProbe } from "../inbound.ts"
import {
  type AdapterError,
  adapterError,
  adapterFailure,
  failAdapter,
  type ProviderSession,
  type StartSessionInput
} from "../ProviderAdapter.ts"
import { eventIds, liveScope } from "../kernel/ids.ts"
import { turnStartRefusal } from "../kernel/OpenRequests.ts"
import { callPeer, makeSession, readPeer } from "../kernel/Session.ts"
import type { TranscriptEntry } from "../kernel/transcript.ts"
import { definedFields } from "../../util/definedFields.ts"
import { openAcpSession } from "./AcpHandshake.ts"
import { step } from "./AcpMapping.ts"
import { makeAcpAnswers } from "./AcpRequestAnswer.ts"
import type { AcpProfile } from "./AcpProfile.ts"
import { initialAcpState, type AcpState } from "./AcpState.ts"
import { makeAcpTransport } from "./AcpTransport.ts"
import { modeRequests } from "./AcpModes.ts"

/** `resumeNativeSessionId` resumes with `session/load` when the agent announces `loadSession`. */
export type AcpSessionInput = StartSessionInput

/** How an ACP adapter runs its sessions (the profile says which agent). */
export interface AcpSessionOptions {
  /** The agent's whole environment (not merged with this process's, the default); credentials are read from it. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /**
   * For an agent that keeps its sessions under its `HOME` (claude-agent-acp, codex-acp): the
   * agent's whole environment on `home`, the thread's directory the server keeps while the
   * thread may be resumed, after writing there what the agent needs (its config). With it the
   * adapter asks the server for that directory (`homeFor`) and `env` is not used, so a resume
   * after a restart finds the session the agent saved.
   */
  readonly prepareHome?: (home: string) => Readonly<Record<string, string | undefined>>
  /**
   * Sees every line the session maps, in the order it maps them (a replay meets them in that
   * order): agent messages (`in`), ours (`out`, our answers as they are written) and `local`
   * invalid lines; not the exit, which a recorder takes from `session.exited`.
   */
  readonly tap?: (entry: TranscriptEntry) => void
  /**
   * Prefix of every derived id (turns, requests, prompts, plans, events). Defaults to the
   * thread id plus a random part; recording sets it so a replay reproduces the same ids.
   */
  readonly idPrefix?: (input: AcpSessionInput) => string
  /** Counters of every session's bounded inbound queue (`readLinesPaced`), for tests. */
  readonly probe?: FlowProbe
}

/** How long initialize / authenticate / session set-up / a mode switch may wait for the agent's answer. */
const REQUEST_TIMEOUT_MS = 60_000

const isExit = ({ dir, msg }: TranscriptEntry) =>
  dir === "local" && typeof msg === "object" && msg !== null && "kind" in msg && msg.kind === "exit"

/** The agent's environment: on the thread's home when the options keep one, else `env`. */
const sessionEnv = (options: AcpSessionOptions, input: AcpSessionInput) => {
  const { prepareHome } = options
  if (prepareHome === undefined) return Effect.succeed(options.env ?? process.env)
  const home = input.home
  if (home === undefined)
    return failAdapter("start_failed", "this agent keeps its sessions in a home, and none was given")
  return Effect.try({
    try: () => prepareHome(home),
    catch: adapterFailure("start_failed", `cannot prepare ${home}`)
  })
}

/**
 * One ACP session over one agent process. Every line — an agent message, a message of ours, an
 * invalid line, the exit — goes through the pure mapping on the kernel's `Session`, which
 * holds its state: events are recorded before anything is written to the agent, and an answer's
 * resolution is durable before the agent sees the answer. Ids are `kernel/ids.ts`'s, in the
 * session's scope (`idPrefix`), as a replay gives them.
 */
export const makeAcpSession = (
  profile: AcpProfile,
  options: AcpSessionOptions,
  input: AcpSessionInput
): Effect.Effect<ProviderSession, AdapterError, Scope.Scope> =>
  Effect.gen(function* () {
    const { tap } = options
    const env = yield* sessionEnv(options, input)
    if (profile.auth !== undefined && !profile.auth.env.some((name) => (env[name] ?? "").length > 0)) {
      const names = profile.auth.env.join(" or ")
      return yield* failAdapter("start_failed", `${profile.label} needs credentials: set ${names} in its environment`)
    }
    const idPrefix = options.idPrefix?.(input) ?? liveScope(input.threadId)
    const agent = yield* makeAcpTransport({
      command: profile.command,
      args: profile.args,
      cwd: input.cwd,
      env,
      ...definedFields({ probe: options.probe })
    })
    const session = yield* makeSession<AcpState, TranscriptEntry, unknown>({
      provider: profile.provider,
      threadId: input.threadId,
      initial: initialAcpState(profile, idPrefix),
      step,
      eventId: eventIds(idPrefix),
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
      isExit,
      openRequests: (state) => state.pending
    })
    const answers = makeAcpAnswers(session, agent.write, profile.label)
    // The single reader: the agent's lines are mapped strictly in stream order.
    const reader = yield* readPeer(session, agent, answers.cancelUnseen)
    // Runs before the reader is interrupted: end the agent, then let its exit be mapped.
    yield* Effect.addFinalizer(() =>
      Effect.andThen(agent.shutdown, Fiber.await(reader).pipe(Effect.timeoutOption(3000)))
    )

    const ours = (msg: object): TranscriptEntry => ({ dir: "out", msg })
    const callAgent = callPeer(session, agent, ours)
    /** A request of ours; its result once the agent's response is mapped. */
    const call = (method: string, params: unknown) => {
      const failed = (e: AdapterError) =>
        adapterError(e.kind, `${method} failed: ${e.message}`, {
          cause: e,
          ...definedFields({ stderr: agent.stderr().slice(-600) || undefined })
        })
      return Effect.timeoutOrElse(callAgent(method, params).pipe(Effect.mapError(failed)), {
        duration: REQUEST_TIMEOUT_MS,
        orElse: () => failAdapter("timeout", `${method}: no answer within ${REQUEST_TIMEOUT_MS} ms`)
      })
    }

    const alive = Effect.suspend(() =>
      agent.isAlive() ? Effect.void : failAdapter("provider_exited", `${profile.label} has exited`)
    )

    yield* openAcpSession({ call, profile, cwd: input.cwd, resumeNativeSessionId: input.resumeNativeSessionId })
    const sessionId = session.peek().nativeSessionId
    if (sessionId === undefined)
      return yield* failAdapter("protocol", `${profile.label}: no sessionId in the session/new response`)

    // ---- operations ------------------------------------------------------------------
    const setMode = (mode: OperatingMode): Effect.Effect<void, AdapterError> =>
      Effect.gen(function* () {
        yield* alive
        const state = yield* session.state
        if (state.modes.mode === mode) return
        const requests = modeRequests(state, mode)
        if (requests === undefined)
          return yield* failAdapter("unsupported", `${profile.label} offers no mode for '${mode}' in this session`)
        // Each reply is mapped at its place in the stream (codex-acp answers before it echoes
        // config_option_update, Cursor after current_mode_update), then awaited here.
        for (const request of requests) yield* call(request.method, request.params)
      })

    // ACP takes no steering input: a new turn waits for the running one (kernel `OpenRequests.ts`).
    const busy = (s: AcpState) => turnStartRefusal(s.pending, s.turnId, false)

    const startTurn = (turn: { readonly text: string; readonly mode?: OperatingMode }) =>
      Effect.gen(function* () {
        yield* alive
        const refused = busy(yield* session.state)
        if (refused !== undefined) return yield* Effect.fail(refused)
        if (turn.mode !== undefined) yield* setMode(turn.mode)
        // Not awaited: the turn ends when the prompt's response is mapped, after every update before it.
        const request = agent.prepareRequest("session/prompt", {
          sessionId,
          prompt: [{ type: "text", text: turn.text }]
        })
        let turnId: TurnId | undefined
        const started = Effect.sync(() => (turnId = session.peek().turnId))
        yield* session.send(ours(request.msg), Effect.andThen(started, Effect.ignore(agent.write(request.msg))), busy)
        return turnId ?? (yield* failAdapter("protocol", "the prompt started no turn"))
      })

    const interrupt = (): Effect.Effect<void, AdapterError> =>
      Effect.gen(function* () {
        const turnId = (yield* session.state).turnId
        if (turnId === undefined) return
        const cancel = { jsonrpc: "2.0", method: "session/cancel", params: { sessionId } }
        yield* session.send(ours(cancel), agent.write(cancel))
        yield* answers.cancelInTurn(turnId)
      })

    if (input.mode !== session.peek().modes.mode) yield* setMode(input.mode)

    return {
      provider: profile.provider,
      threadId: input.threadId,
      capabilities: Effect.sync(() => session.peek().capabilities),
      mode: Effect.sync(() => session.peek().modes.mode),
      startTurn,
      interrupt,
      setMode,
      respondToUserInput: answers.respondToUserInput,
      dismissUserInput: answers.dismissUserInput,
      respondToRequest: answers.respondToRequest,
      decidePlan: answers.decidePlan
    } satisfies ProviderSession
  })
