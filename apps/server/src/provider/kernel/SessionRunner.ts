import type { ProviderKind, RuntimeEvent, ThreadId } from "@planbridge/contracts"
import { Cause, Effect, Exit, Semaphore } from "effect"
import { AdapterError, adapterError, type EmitRuntimeEvent, type EmitRuntimeEvents } from "../ProviderAdapter.ts"
import { makeLogBudget } from "../logBudget.ts"
import { rawOf, stampDraft, type EventDraft } from "./EventDraft.ts"

/** What a mapping's `step` gives for one line: its next state, its event drafts, the replies it owes. */
export interface Stepped<State, Reply> {
  readonly state: State
  readonly drafts: ReadonlyArray<EventDraft>
  readonly replies: ReadonlyArray<Reply>
}

export interface SessionRunnerOptions<State, Line, Reply> {
  readonly provider: ProviderKind
  readonly threadId: ThreadId
  readonly initial: State
  /** The provider's mapping, the same one its replay drives. */
  readonly step: (state: State, line: Line) => Stepped<State, Reply>
  /** The next event id (the provider's id scheme, which its replay reproduces). */
  readonly eventId: () => string
  readonly emit: EmitRuntimeEvent
  /** The events of a burst of lines in one transaction (all or none); without it, one by one. */
  readonly emitAll?: EmitRuntimeEvents | undefined
  /** Writes a reply to the provider; a failed write is the provider's exit, which reports itself. */
  readonly write: (reply: Reply) => Effect.Effect<void>
  /** Records the line in the session's transcript, at its place among the mapped lines. */
  readonly record?: (line: Line) => void
}

/** Checked under the lock before mapping: a failure aborts with nothing mapped, emitted or sent. */
export type Guard<State> = (state: State) => AdapterError | undefined

export interface ApplyOptions<State, E> {
  readonly guard?: Guard<State>
  /**
   * Our own decision (an answer): if one of its events cannot be recorded, nothing is committed
   * or written (the step returned values, so there is nothing to undo) and the caller gets the error.
   */
  readonly strict?: boolean
  /** Runs under the lock after the replies were written. */
  readonly after?: Effect.Effect<void, E>
}

/**
 * The one serialiser of a provider session, the same for every provider. Under one lock, a
 * line is recorded, stepped through the mapping, its drafts stamped (validated) and emitted in
 * order, the new state committed, and only then are the replies written: nothing reaches a
 * provider before its events are durable. A draft that cannot be emitted is reported as one
 * `runtime.error` (`<provider>.emit_failed`), the rest still go out; a mapping that throws is a
 * bug whose line becomes one `runtime.error` (`mapping_failed`). With the server's `emitAll`, a
 * line's events, or a whole burst's (`applyAll`), are one transaction (one commit, not one per
 * event); if it fails nothing was recorded, and they go one by one as above, each failure named.
 * Every recorded `runtime.warning` is also logged, within the session's budget (`logBudget.ts`),
 * by the server's logger (http/RuntimeLog.ts: never stdout under `planbridge acp`).
 */
export const makeSessionRunner = Effect.fn("SessionRunner.make")(function* <State, Line, Reply>(
  options: SessionRunnerOptions<State, Line, Reply>
) {
  const lock = yield* Semaphore.make(1)
  let state = options.initial
  const stamp = (draft: EventDraft) =>
    stampDraft(draft, {
      eventId: options.eventId(),
      createdAt: new Date().toISOString(),
      provider: options.provider,
      threadId: options.threadId
    })
  const stepSafely = (from: State, line: Line): Stepped<State, Reply> => {
    try {
      return options.step(from, line)
    } catch (error) {
      const payload = { code: "mapping_failed", message: String(error), fatal: false }
      return {
        state: from,
        drafts: [{ type: "runtime.error", raw: rawOf("planbridge", undefined, line), payload }],
        replies: []
      }
    }
  }
  const eventsOf = (result: Stepped<State, Reply>) => result.drafts.map(stamp)
  // Every warning is one event, but the log gets a rate-limited summary (logBudget.ts).
  const warningLog = makeLogBudget()
  const logWarning = (event: Extract<RuntimeEvent, { type: "runtime.warning" }>) =>
    warningLog((dropped) =>
      Effect.logWarning(
        `${options.provider}: ${event.payload.code}: ${event.payload.message}` +
          (dropped > 0 ? ` (${dropped} earlier warnings of this session not logged)` : "")
      )
    )
  const seen = (events: ReadonlyArray<RuntimeEvent>) => {
    // Nearly every burst has no warning: then no effect at all on the hot path.
    const warnings = events.filter((event) => event.type === "runtime.warning")
    return warnings.length === 0 ? Effect.void : Effect.forEach(warnings, logWarning, { discard: true })
  }
  /** Emits one by one, in order; returns the first event that could not be recorded, and why. */
  const emitEach = Effect.fn("SessionRunner.emitEach")(function* (
    events: ReadonlyArray<RuntimeEvent>,
    strict: boolean
  ) {
    let failed: NotRecorded | undefined
    for (const event of events) {
      const emitted = yield* Effect.exit(options.emit(event))
      if (Exit.isSuccess(emitted)) {
        yield* seen([event])
        continue
      }
      // What emit failed with (the server's ingestion error), kept as the AdapterError's cause.
      failed ??= { type: event.type, cause: Cause.squash(emitted.cause) }
      const payload = {
        code: `${options.provider}.emit_failed`,
        message: strict
          ? `could not record ${event.type}; nothing was sent`
          : `could not record ${event.type} ${event.eventId}`,
        fatal: false
      }
      const raw = event.raw ?? rawOf("planbridge", undefined, null)
      yield* Effect.ignore(options.emit(stamp({ type: "runtime.error", raw, payload })))
      if (strict) return failed
    }
    return failed
  })

  /** Several events in one transaction, when the server offers it; false: nothing was recorded. */
  const emitTogether = (events: ReadonlyArray<RuntimeEvent>): Effect.Effect<boolean> =>
    options.emitAll === undefined || events.length < 2
      ? Effect.succeed(false)
      : Effect.exit(options.emitAll(events)).pipe(
          Effect.flatMap((exit) => (Exit.isSuccess(exit) ? Effect.as(seen(events), true) : Effect.succeed(false)))
        )
  /** All of `events`, together if possible, else one by one; the first one not recorded. */
  const record = (events: ReadonlyArray<RuntimeEvent>, strict: boolean) =>
    Effect.flatMap(emitTogether(events), (together) => (together ? Effect.undefined : emitEach(events, strict)))

  /** One line under the lock (see `apply`); true when every event was recorded. */
  const applyLocked = <E = never>(
    line: Line,
    applyOptions: ApplyOptions<State, E> = {}
  ): Effect.Effect<boolean, AdapterError | E> =>
    Effect.gen(function* () {
      const refused = applyOptions.guard?.(state)
      if (refused !== undefined) return yield* Effect.fail(refused)
      const result = stepSafely(state, line)
      const strict = applyOptions.strict === true
      const failed = yield* record(eventsOf(result), strict)
      if (failed !== undefined && strict) {
        const message = `could not record ${failed.type}; nothing was sent`
        return yield* adapterError("protocol", message, { cause: failed.cause })
      }
      yield* commit(line, result, applyOptions)
      return failed === undefined
    })

  /** After a line's events were emitted (or `failed`): the state, the transcript, the replies. */
  const commit = <E>(
    line: Line,
    result: Stepped<State, Reply>,
    applyOptions: ApplyOptions<State, E>
  ): Effect.Effect<void, E> =>
    Effect.gen(function* () {
      options.record?.(line)
      state = result.state
      for (const reply of result.replies) yield* options.write(reply)
      if (applyOptions.after !== undefined) yield* applyOptions.after
    })

  /**
   * The provider's lines waiting at once (a burst), each mapped as `apply` would one by one, but
   * all their events recorded with one `emitAll` (one transaction) before any state is committed
   * or anything written. If the burst cannot be recorded at once, nothing of it was, and each
   * line's events go one by one as `apply` sends them, each failure named. A line its guard
   * refuses is skipped; a failed `after` is the line's own (the next still goes). Gives the lines
   * whose events were not all recorded (committed all the same: what the provider did happened).
   */
  const applyAll = <E>(
    lines: ReadonlyArray<Line>,
    optionsOf: (line: Line) => ApplyOptions<State, E> = () => ({})
  ): Effect.Effect<ReadonlyArray<Line>> =>
    lock.withPermit(
      Effect.gen(function* () {
        const steps: Array<{
          readonly line: Line
          readonly lineOptions: ApplyOptions<State, E>
          readonly result: Stepped<State, Reply>
          readonly events: ReadonlyArray<RuntimeEvent>
        }> = []
        let next = state
        for (const line of lines) {
          const lineOptions = optionsOf(line)
          if (lineOptions.guard?.(next) !== undefined) continue
          const result = stepSafely(next, line)
          steps.push({ line, lineOptions, result, events: eventsOf(result) })
          next = result.state
        }
        const together = yield* emitTogether(steps.flatMap((s) => s.events))
        const unrecorded: Array<Line> = []
        for (const { line, lineOptions, result, events } of steps) {
          if (!together && (yield* emitEach(events, false)) !== undefined) unrecorded.push(line)
          yield* Effect.ignore(commit(line, result, lineOptions))
        }
        return unrecorded
      })
    )

  const runner: SessionRunner<State, Line> = {
    apply: (line, applyOptions) => lock.withPermit(applyLocked(line, applyOptions)),
    applyAll,
    state: lock.withPermit(Effect.sync(() => state)),
    peek: () => state
  }
  return runner
})

/** The first event of a line that could not be recorded, and what `emit` failed with. */
interface NotRecorded {
  readonly type: string
  readonly cause: unknown
}

export interface SessionRunner<State, Line> {
  /** Maps `line` under the lock (see above); true when every event was recorded. */
  readonly apply: <E = never>(line: Line, options?: ApplyOptions<State, E>) => Effect.Effect<boolean, AdapterError | E>
  /** A burst of the provider's lines, in order, their events in one transaction (see above); the lines not recorded. */
  readonly applyAll: <E = never>(
    lines: ReadonlyArray<Line>,
    optionsOf?: (line: Line) => ApplyOptions<State, E>
  ) => Effect.Effect<ReadonlyArray<Line>>
  /** The committed state, read under the lock (so after any line being mapped right now). */
  readonly state: Effect.Effect<State>
  /** The committed state without waiting (for checks that must not block). */
  readonly peek: () => State
}
