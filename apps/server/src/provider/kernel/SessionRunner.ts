import type { ProviderKind, RuntimeEvent, ThreadId } from "@planbridge/contracts"
import { Effect, Exit, Semaphore } from "effect"
import { AdapterError, type EmitRuntimeEvent } from "../ProviderAdapter.ts"
import { rawOf, stampDraft, type EventDraft } from "./EventDraft.ts"

/**
 * What a mapping's `step` gives for one line: its next state, its event drafts (or, for a
 * mapping that stamps them itself with the kernel's `stampDraft`, its events), the replies it owes.
 */
export type Stepped<State, Reply> = {
  readonly state: State
  readonly replies: ReadonlyArray<Reply>
} & ({ readonly drafts: ReadonlyArray<EventDraft> } | { readonly events: ReadonlyArray<RuntimeEvent> })

export interface SessionRunnerOptions<State, Line, Reply> {
  readonly provider: ProviderKind
  readonly threadId: ThreadId
  readonly initial: State
  /** The provider's mapping, the same one its replay drives. */
  readonly step: (state: State, line: Line) => Stepped<State, Reply>
  /** The next event id (the provider's id scheme, which its replay reproduces). */
  readonly eventId: () => string
  readonly emit: EmitRuntimeEvent
  /** Writes a reply to the provider; a failed write is the provider's exit, which reports itself. */
  readonly write: (reply: Reply) => Effect.Effect<void>
  /** Records the line in the session's transcript, at its place among the mapped lines. */
  readonly record?: (line: Line) => void
  /** Sees every stamped event after it was emitted (e.g. to log warnings). */
  readonly emitted?: (event: RuntimeEvent) => Effect.Effect<void>
}

export interface ApplyOptions<State, Reply, E> {
  /** Checked under the lock before mapping: a failure aborts with nothing mapped, emitted or sent. */
  readonly guard?: (state: State) => AdapterError | undefined
  /**
   * Our own decision (an answer): if one of its events cannot be recorded, nothing is written,
   * `rollback` undoes what the step changed in place, and the caller gets the error.
   */
  readonly strict?: { readonly rollback: () => void }
  /** What the provider did happened regardless: replies owed besides the step's when its events could not be recorded. */
  readonly unrecorded?: (state: State) => ReadonlyArray<Reply>
  /** Runs under the lock after the replies were written. */
  readonly after?: Effect.Effect<void, E>
}

/**
 * The one serialiser of a provider session, the same for every provider. Under one lock, a
 * line is recorded, stepped through the mapping, its drafts stamped (validated) and emitted in
 * order, the new state committed, and only then are the replies written: nothing reaches a
 * provider before its events are durable. A draft that cannot be emitted is reported as one
 * `runtime.error` (`<provider>.emit_failed`), the rest still go out; a mapping that throws is a
 * bug whose line becomes one `runtime.error` (`mapping_failed`).
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
  const stepSafely = (line: Line): Stepped<State, Reply> => {
    try {
      return options.step(state, line)
    } catch (error) {
      const payload = { code: "mapping_failed", message: String(error), fatal: false }
      return {
        state,
        drafts: [{ type: "runtime.error", raw: rawOf("planbridge", undefined, line), payload }],
        replies: []
      }
    }
  }
  /** Emits in order; returns the type of the first event that could not be recorded. */
  const emitAll = Effect.fn("SessionRunner.emitAll")(function* (events: ReadonlyArray<RuntimeEvent>, strict: boolean) {
    let failed: string | undefined
    for (const event of events) {
      const emitted = yield* Effect.exit(options.emit(event))
      if (Exit.isSuccess(emitted)) {
        if (options.emitted !== undefined) yield* options.emitted(event)
        continue
      }
      failed ??= event.type
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

  /** `apply` for a caller that holds the lock already (`withLock`); true when every event was recorded. */
  const applyUnlocked = <E = never>(
    line: Line,
    applyOptions: ApplyOptions<State, Reply, E> = {}
  ): Effect.Effect<boolean, AdapterError | E> =>
    Effect.gen(function* () {
      const refused = applyOptions.guard?.(state)
      if (refused !== undefined) return yield* Effect.fail(refused)
      const result = stepSafely(line)
      const events = "events" in result ? result.events : result.drafts.map(stamp)
      const failed = yield* emitAll(events, applyOptions.strict !== undefined)
      if (failed !== undefined && applyOptions.strict !== undefined) {
        applyOptions.strict.rollback()
        return yield* new AdapterError({ reason: "protocol", message: `could not record ${failed}; nothing was sent` })
      }
      options.record?.(line)
      state = result.state
      const owed = failed !== undefined && applyOptions.unrecorded !== undefined ? applyOptions.unrecorded(state) : []
      for (const reply of [...result.replies, ...owed]) yield* options.write(reply)
      if (applyOptions.after !== undefined) yield* applyOptions.after
      return failed === undefined
    })

  const runner: SessionRunner<State, Line, Reply> = {
    apply: (line, applyOptions) => lock.withPermit(applyUnlocked(line, applyOptions)),
    applyUnlocked,
    withLock: (effect) => lock.withPermit(effect),
    state: lock.withPermit(Effect.sync(() => state)),
    peek: () => state
  }
  return runner
})

export interface SessionRunner<State, Line, Reply> {
  /** Maps `line` under the lock (see above); true when every event was recorded. */
  readonly apply: <E = never>(
    line: Line,
    options?: ApplyOptions<State, Reply, E>
  ) => Effect.Effect<boolean, AdapterError | E>
  readonly applyUnlocked: <E = never>(
    line: Line,
    options?: ApplyOptions<State, Reply, E>
  ) => Effect.Effect<boolean, AdapterError | E>
  /** Runs `effect` under the session's lock (several lines and a decision as one step). */
  readonly withLock: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>
  /** The committed state, read under the lock (so after any line being mapped right now). */
  readonly state: Effect.Effect<State>
  /** The committed state without waiting (for checks that must not block). */
  readonly peek: () => State
}
