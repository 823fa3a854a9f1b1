import { type OperatingMode, type TurnId } from "@planbridge/contracts"
import { Effect, Result, Schema, Scope } from "effect"
import {
  AdapterError,
  adapterError,
  failAdapter,
  type ProviderAdapter,
  type ProviderSession,
  type StartSessionInput
} from "../ProviderAdapter.ts"
import { codexCommand, codexHomeFor, codexLaunch, type CodexCredentials } from "./CodexLaunch.ts"
import { nativeMode, setModeStep, step } from "./CodexMapping.ts"
import {
  codexCapabilities,
  initialMappingState,
  noSuchMode,
  runningTurn,
  type CodexMappingState,
  type OpenServerRequest,
  type StepResult
} from "./CodexMappingState.ts"
import { makeAnswers } from "../kernel/Answers.ts"
import { modeSwitchRefusal, turnStartRefusal } from "../kernel/OpenRequests.ts"
import { codexReplies, redactTraffic, type CodexReply } from "./CodexServerRequests.ts"
import { TurnStartResult } from "./CodexProtocol.ts"
import {
  decidePermissions,
  turnPermissions,
  type CodexApprovalPolicy,
  type CodexSandboxMode
} from "./CodexPermissions.ts"
import { entryOf, isExit, sentLine, type CodexLine } from "./CodexLine.ts"
import { callPeer, makeSession, readPeer } from "../kernel/Session.ts"
import { eventIds, liveScope } from "../kernel/ids.ts"
import { CODEX_INITIALIZE, makeCodexTransport } from "./CodexTransport.ts"
import type { TranscriptEntry } from "../kernel/transcript.ts"
import { definedFields } from "../../util/definedFields.ts"

/**
 * The Codex adapter: one `codex app-server` process per session, spoken to over its real
 * JSON-RPC protocol (experimental API on, for collaboration modes and questions).
 */

/** Isolated (a scratch CODEX_HOME, our model provider) or the user's own Codex; see CodexLaunch.ts. */
export type CodexAdapterOptions = CodexCredentials & CodexSessionOptions
/** The options of an isolated session (tests, recordings, deployments with their own key). */
export type IsolatedCodexAdapterOptions = Extract<CodexAdapterOptions, { readonly apiKey: string }>

export interface CodexSessionOptions {
  /** Defaults to the installed `@openai/codex` run by this Node binary. Tests may substitute a stand-in. */
  readonly command?: { readonly command: string; readonly args: ReadonlyArray<string> }
  /**
   * The default mode's approval policy and sandbox when the user's own Codex configuration sets
   * none (user mode) — the server's option; without it, `on-request` + `workspace-write`. Plan
   * mode always runs read-only (CodexPermissions.ts).
   */
  readonly approvalPolicy?: CodexApprovalPolicy
  readonly sandbox?: CodexSandboxMode
  readonly ephemeral?: boolean
  /** Resume this native thread instead of starting a new one. */
  readonly resumeNativeThreadId?: string
  readonly requestTimeoutMs?: number
  readonly env?: Readonly<Record<string, string>>
  /** Sees the wire as sent, secret answers redacted (recorders). */
  readonly onTraffic?: (entry: TranscriptEntry) => void
}

export interface CodexProviderSession extends ProviderSession {
  readonly pid: number
  readonly nativeThreadId: string
  readonly stderr: () => string
}

export interface CodexAdapter extends ProviderAdapter {
  readonly startSession: (input: StartSessionInput) => Effect.Effect<CodexProviderSession, AdapterError, Scope.Scope>
}

/** A mode switch while a turn runs (or is being started) is refused busy (kernel rule). */
const switchRefusal = (state: CodexMappingState, mode: OperatingMode) =>
  modeSwitchRefusal(runningTurn(state), state.mode, mode)

export const makeCodexAdapter = (options: CodexAdapterOptions): CodexAdapter => ({
  provider: "codex",
  // The CODEX_HOME holding the thread's rollout, which `thread/resume` reads: in isolated mode the
  // thread's own directory, in user mode the user's Codex home (never created or removed by us).
  homeFor: (threadDir) => codexHomeFor(options, threadDir),
  startSession: (input) =>
    Effect.gen(function* () {
      // Refused before any process starts: a session never claims a mode Codex does not have.
      if (nativeMode(input.mode) === undefined) return yield* failAdapter("unsupported", noSuchMode(input.mode))
      const launch = yield* Effect.mapError(codexLaunch(options, options.env, input.home), (e) =>
        adapterError("start_failed", e.message, { cause: e })
      )
      const { command, args } = options.command ?? codexCommand()
      // Recorders see the wire as sent, except secret answers, which only Codex may see in clear.
      let peek: () => CodexMappingState | undefined = () => undefined
      const tap = options.onTraffic
      const onTraffic =
        tap === undefined ? undefined : (entry: TranscriptEntry) => tap(redactTraffic(entryOf(entry), peek()))
      const transport = yield* makeCodexTransport({
        command,
        args: [...args, ...launch.args],
        cwd: input.cwd,
        env: launch.env,
        ...definedFields({ requestTimeoutMs: options.requestTimeoutMs, onTraffic })
      })
      // Every input — a Codex message, one we send, the exit, a mode switch (a step function: no
      // line on the wire) — is mapped under the session's lock, its events recorded before we write.
      const core = yield* makeSession({
        provider: "codex",
        threadId: input.threadId,
        initial: initialMappingState(input.threadId, input.mode),
        step: (state: CodexMappingState, line: CodexLine | ((state: CodexMappingState) => StepResult)) =>
          typeof line === "function" ? line(state) : step(state, line),
        eventId: eventIds(liveScope(input.threadId)),
        emit: input.emit,
        emitAll: input.emitAll,
        write: (reply) => Effect.ignore(transport.write(reply)),
        isExit: (line) => typeof line !== "function" && isExit(line),
        openRequests: (state) => state.serverRequests
      })
      yield* readPeer(core, transport)
      /** A request of ours through the mapping (so replay sees it too); its result once its response is mapped. */
      const call = callPeer(core, transport, sentLine)
      peek = core.peek

      // On close: stop the process group and record the exit (and every prompt it orphans).
      yield* Effect.addFinalizer(() =>
        Effect.gen(function* () {
          if (core.exited()) return
          transport.kill("SIGTERM", true)
          const exit = yield* transport.exited.pipe(Effect.timeoutOption(2_000))
          if (exit._tag === "None") transport.kill("SIGKILL", true)
          const input =
            exit._tag === "Some"
              ? exit.value
              : ({ dir: "local", msg: { kind: "exit", code: null, signal: "SIGKILL", expected: true } } as const)
          // Best effort: whoever receives the events may already be closing too.
          yield* Effect.ignore(core.apply(input).pipe(Effect.timeoutOption(5_000)))
        })
      )

      const handshake = Effect.gen(function* () {
        yield* call("initialize", CODEX_INITIALIZE)
        const initialized = { method: "initialized" }
        yield* core.send(sentLine(initialized), transport.write(initialized))
        // The layers the session inherits from the user's setup, for `session.configured`, and
        // the user's own approval policy and sandbox, which the default mode keeps (the mapping
        // keeps them as the response says; none when it is unreadable).
        if (options.credentials === "user") yield* call("config/read", { includeLayers: true, cwd: input.cwd })
        const decision = decidePermissions(options, core.peek().configLayers ?? [])
        onTraffic?.({ dir: "local", msg: decision })
        yield* core.apply({ dir: "local", msg: decision })
        const threadParams = {
          cwd: input.cwd,
          approvalPolicy: decision.approvalPolicy.value,
          sandbox: decision.sandbox.value
        }
        const resumeId = input.resumeNativeSessionId ?? options.resumeNativeThreadId
        // A home the server keeps is there to be resumed from: the thread's rollout must be written.
        const ephemeral = options.ephemeral ?? input.home === undefined
        yield* resumeId !== undefined
          ? // The history stays with Codex; `excludeTurns` avoids the deprecated full-history hydration.
            call("thread/resume", { threadId: resumeId, ...threadParams, excludeTurns: true })
          : call("thread/start", { ...threadParams, ephemeral })
      })
      yield* Effect.mapError(handshake, (e) =>
        adapterError("start_failed", `${e.message}; stderr: ${transport.stderr().slice(-2000)}`, { cause: e })
      )
      const nativeThreadId = core.peek().nativeThreadId
      if (nativeThreadId === null)
        return yield* failAdapter("start_failed", `codex exited during start-up: ${transport.stderr().slice(-2000)}`)

      const gone = () => adapterError("provider_exited", "the Codex app-server has exited")
      const alive = Effect.suspend(() => (transport.isAlive() && !core.exited() ? Effect.void : Effect.fail(gone())))

      const startTurn = (turn: { readonly text: string; readonly mode?: OperatingMode }) =>
        Effect.gen(function* () {
          yield* alive
          const state = yield* core.state
          const mode = turn.mode ?? state.mode
          const native = nativeMode(mode)
          if (native === undefined) return yield* failAdapter("unsupported", noSuchMode(mode))
          const result = yield* call(
            "turn/start",
            {
              threadId: nativeThreadId,
              input: [{ type: "text", text: turn.text, text_elements: [] }],
              // Plan turns read-only, default turns what the session decided (CodexPermissions.ts).
              ...turnPermissions(native, state.applied),
              collaborationMode: {
                mode: native,
                settings: {
                  model: state.model ?? launch.model ?? null,
                  reasoning_effort: null,
                  developer_instructions: null
                }
              }
            },
            // 0.171.0 would queue the text as steering input into the waiting turn and lose it on
            // interrupt. Steering text into the running turn is fine; steering a mode into it is not.
            (current) =>
              turnStartRefusal(current.serverRequests, runningTurn(current), true) ??
              (turn.mode === undefined ? undefined : switchRefusal(current, turn.mode))
          )
          const decoded = Schema.decodeUnknownResult(TurnStartResult)(result)
          if (Result.isFailure(decoded)) return yield* failAdapter("protocol", `turn/start: ${decoded.failure.message}`)
          return decoded.success.turn.id as TurnId
        })

      // Sends one response to a server request: re-checked under the lock (the turn may have just
      // ended), recorded through the mapping, and only then written.
      const reply = (request: OpenServerRequest, body: CodexReply) => {
        const msg = { id: request.nativeId, ...body }
        return core.answer(request, sentLine(msg), {
          guard: () => (transport.isAlive() ? undefined : gone()),
          write: transport.write(msg)
        })
      }

      const session: CodexProviderSession = {
        provider: "codex",
        threadId: input.threadId,
        pid: transport.pid,
        nativeThreadId,
        stderr: transport.stderr,
        capabilities: Effect.succeed(codexCapabilities),
        mode: Effect.map(core.state, (state) => state.mode),
        startTurn,
        interrupt: () =>
          Effect.gen(function* () {
            yield* alive
            const turnId = (yield* core.state).activeTurnId
            if (turnId === null) return
            yield* call("turn/interrupt", { threadId: nativeThreadId, turnId })
          }),
        setMode: (mode) =>
          nativeMode(mode) === undefined
            ? failAdapter("unsupported", noSuchMode(mode))
            : core.apply((state) => setModeStep(state, mode), {
                guard: (state) => switchRefusal(state, mode)
              }),
        ...makeAnswers(
          Effect.map(core.state, (state) => state.serverRequests),
          (request, body) => Effect.andThen(alive, reply(request, body)),
          codexReplies
        )
      }
      return session
    })
})
