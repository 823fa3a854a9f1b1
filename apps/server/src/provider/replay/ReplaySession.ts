import type {
  OperatingMode,
  ProviderCapabilities,
  ProviderKind,
  RuntimeEvent,
  ThreadId,
  TurnId
} from "@planbridge/contracts"
import { Clock, Deferred, Duration, Effect, Semaphore, type Scope } from "effect"
import { stampDraft, type EventDraft } from "../kernel/EventDraft.ts"
import { eventIds, replayScope } from "../kernel/ids.ts"
import {
  AdapterError,
  adapterError,
  failAdapter,
  type ProviderSession,
  type StartSessionInput
} from "../ProviderAdapter.ts"
import { matchGate, type ReplayCommand } from "./ReplayGates.ts"
import { describeGate, type Segment } from "./ReplayScript.ts"

/** How a replay plays (`planbridge serve --replay DIR --replay-speed N --replay-strict`). */
export interface ReplayOptions {
  /** Refuse an answer that differs from the recorded one (else: accepted, with a `runtime.warning`). */
  readonly strict: boolean
  /** The recorded pace divided by it: 1 as recorded, 10 ten times faster, 0 without waiting. */
  readonly speed: number
}

/** A replayed session can never continue its recorded conversation after it ends. */
export const replayCapabilities = (capabilities: ProviderCapabilities): ProviderCapabilities => ({
  ...capabilities,
  supportsResume: false
})

/** The recorded event as this session's: its cwd, capabilities without resume. */
const adjusted = (event: RuntimeEvent, cwd: string): RuntimeEvent => {
  switch (event.type) {
    case "session.started":
      return { ...event, payload: { ...event.payload, cwd } }
    case "session.configured":
      return { ...event, payload: { ...event.payload, capabilities: replayCapabilities(event.payload.capabilities) } }
    case "capabilities.changed":
      return { ...event, payload: { capabilities: replayCapabilities(event.payload.capabilities) } }
    default:
      return event
  }
}

/**
 * A recorded session played as a live one (no provider program): the first segment at start,
 * each further one when the client sends the command that opens its gate, at the recorded pace.
 * A command's first burst is durable before the command returns, as with a real provider.
 */
export const startReplaySession = (input: {
  readonly provider: ProviderKind
  readonly capabilities: ProviderCapabilities
  /** The mode the recording started in; a session asked for another starts with a warning. */
  readonly recordedMode: OperatingMode
  readonly segments: ReadonlyArray<Segment>
  readonly start: StartSessionInput
  readonly options: ReplayOptions
}): Effect.Effect<ProviderSession, AdapterError, Scope.Scope> =>
  Effect.gen(function* () {
    const { provider, segments, start, options } = input
    const threadId: ThreadId = start.threadId
    const emitAll = start.emitAll ?? ((events) => Effect.forEach(events, start.emit, { discard: true }))
    let mode: OperatingMode = start.mode
    let capabilities = replayCapabilities(input.capabilities)
    let exited = false
    const nextEventId = eventIds(replayScope(threadId))
    /** The segment whose gate the player waits at (all before it played), or undefined while it plays. */
    let waitingAt: number | undefined
    const opened = segments.map(() => Deferred.makeUnsafe<number>())
    const done = Deferred.makeUnsafe<void>()
    const commands = yield* Semaphore.make(1)

    const track = (event: RuntimeEvent) => {
      if (event.type === "session.configured") {
        mode = event.payload.mode
        capabilities = event.payload.capabilities
      } else if (event.type === "mode.changed") mode = event.payload.mode
      else if (event.type === "capabilities.changed") capabilities = event.payload.capabilities
      else if (event.type === "session.exited") exited = true
    }
    const stamped = (drafts: ReadonlyArray<EventDraft>) =>
      Effect.map(Clock.currentTimeMillis, (now) =>
        drafts.map((draft) =>
          stampDraft(draft, {
            provider,
            threadId,
            eventId: nextEventId(),
            createdAt: new Date(now).toISOString()
          })
        )
      )
    const play = (drafts: ReadonlyArray<EventDraft>) =>
      Effect.gen(function* () {
        const events = yield* stamped(drafts)
        yield* Effect.mapError(emitAll(events), (e) => adapterError("protocol", e.message, { cause: e }))
        events.forEach(track)
      })
    const recorded = (index: number, burst: number) =>
      segments[index]!.bursts[burst]!.events.map((event) => adjusted(event, start.cwd))
    const warning = (differences: ReadonlyArray<string>, what: string): EventDraft => ({
      type: "runtime.warning",
      raw: { source: "planbridge.replay", payload: { differences } },
      payload: {
        code: "replay.answer_differs",
        message: `${what} differs from the recording (${differences.join("; ")}); the recorded continuation follows`,
        detail: { differences: [...differences] }
      }
    })

    if (start.resumeNativeSessionId !== undefined)
      return yield* failAdapter("unsupported", "a replayed session cannot be resumed: start a new one")

    /** After the first segment (played at start): each waits at its gate, then plays at the recorded pace. */
    const player = Effect.gen(function* () {
      for (let index = 1; index < segments.length; index++) {
        const segment = segments[index]!
        let from = 0
        if (segment.gate !== undefined) {
          if (!(yield* Deferred.isDone(opened[index]!))) waitingAt = index
          from = yield* Deferred.await(opened[index]!)
        }
        for (let burst = from; burst < segment.bursts.length; burst++) {
          const gap = burst === 0 ? 0 : segment.bursts[burst]!.atMs - segment.bursts[burst - 1]!.atMs
          if (options.speed > 0 && gap > 0) yield* Effect.sleep(Duration.millis(gap / options.speed))
          yield* play(recorded(index, burst))
        }
      }
      waitingAt = undefined
    })

    /**
     * Opens the gate the player waits at with `command`: its first burst (after a warning naming
     * any difference) is durable when this returns; the player plays the rest.
     */
    const open = (command: ReplayCommand, what: string) =>
      commands.withPermits(1)(
        Effect.gen(function* () {
          if (exited) return yield* failAdapter("provider_exited", "the replayed session has exited")
          const at = waitingAt
          const gate = at === undefined ? undefined : segments[at]!.gate
          const ended = at === undefined && (yield* Deferred.isDone(done))
          // `startTurn` with a mode at the recorded mode switch before a turn: both, as recorded.
          const modeFirst = at !== undefined && gate?.kind === "mode" && command.kind === "turn"
          const target = modeFirst ? segments[at + 1]?.gate : gate
          if (modeFirst && target?.kind === "turn" && command.mode !== undefined && command.mode !== gate.mode)
            return yield* failAdapter("unsupported", `the recording waits for ${describeGate(gate)}`)
          const match = matchGate(target, command, ended)
          if (!match.ok) return yield* failAdapter(match.reason, match.message)
          if (match.differences.length > 0 && options.strict)
            return yield* failAdapter(
              "invalid_answer",
              `${what} differs from the recording (${match.differences.join("; ")}); --replay-strict refuses it`
            )
          waitingAt = undefined
          const index = modeFirst ? at! + 1 : at!
          const lead = match.differences.length > 0 ? [warning(match.differences, what)] : []
          if (modeFirst) {
            yield* play(segments[at!]!.bursts.flatMap((_, burst) => recorded(at!, burst)))
            yield* Deferred.succeed(opened[at!]!, segments[at!]!.bursts.length)
          }
          yield* play([...lead, ...recorded(index, 0)])
          yield* Deferred.succeed(opened[index]!, 1)
          return segments[index]!.bursts[0]!.events
        })
      )

    yield* play(segments[0]?.bursts.flatMap((_, burst) => recorded(0, burst)) ?? [])
    // Not an answer: a session started in another mode plays with a warning, strict or not (the
    // recording's own session.configured then says the mode it ran in).
    if (input.recordedMode !== start.mode) {
      const difference = `session mode '${start.mode}', recorded '${input.recordedMode}'`
      yield* play([warning([difference], "the session's mode")])
    }
    // Closed (the thread ended, the server stops): the session exits as a provider would. Added
    // before the player is forked, so it runs after the player is interrupted (finalizers run in reverse).
    yield* Effect.addFinalizer(() =>
      exited
        ? Effect.void
        : Effect.ignore(
            play([{ type: "session.exited", payload: { exitKind: "graceful", exitCode: null, signal: null } }])
          )
    )

    yield* Effect.forkScoped(
      Effect.andThen(
        player.pipe(Effect.catchTag("AdapterError", (e) => Effect.logWarning(`replay stopped: ${e.message}`))),
        Deferred.succeed(done, undefined)
      )
    )
    const session: ProviderSession = {
      provider,
      threadId,
      capabilities: Effect.sync(() => capabilities),
      mode: Effect.sync(() => mode),
      startTurn: (turn) =>
        Effect.flatMap(
          open({ kind: "turn", text: turn.text, mode: turn.mode }, "the turn"),
          (events): Effect.Effect<TurnId, AdapterError> => {
            const started = events.find((e) => e.type === "turn.started")
            return started?.turnId === undefined
              ? failAdapter("protocol", "the recorded turn has no turn.started")
              : Effect.succeed(started.turnId)
          }
        ),
      interrupt: () => Effect.asVoid(open({ kind: "interrupt" }, "the interrupt")),
      setMode: (to) => Effect.asVoid(open({ kind: "mode", mode: to }, "the mode switch")),
      respondToUserInput: (answer) =>
        Effect.asVoid(
          open({ kind: "answer", promptId: answer.answer.promptId, answers: answer.answer.answers }, "the answer")
        ),
      dismissUserInput: (promptId, resolution) =>
        Effect.asVoid(open({ kind: "dismiss", promptId, resolution }, "the dismissal")),
      respondToRequest: (requestId, optionId) =>
        Effect.asVoid(open({ kind: "request", requestId, optionId }, "the chosen option")),
      decidePlan: (decision) =>
        capabilities.supportsExitPlanMode
          ? Effect.asVoid(
              open(
                {
                  kind: "plan",
                  planId: decision.planId,
                  decision: decision.decision,
                  feedback: decision.feedback,
                  editedMarkdown: decision.editedMarkdown
                },
                "the plan decision"
              )
            )
          : failAdapter("unsupported", `${provider} cannot decide plans (supportsExitPlanMode is false)`)
    }
    return session
  })
