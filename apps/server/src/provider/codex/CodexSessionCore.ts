import { Deferred, Effect, Scope } from "effect"
import { AdapterError, adapterError, type EmitRuntimeEvent, type EmitRuntimeEvents } from "../ProviderAdapter.ts"
import { makeSessionRunner } from "../kernel/SessionRunner.ts"
import { eventIds, liveScope } from "../kernel/ids.ts"
import { step } from "./CodexMapping.ts"
import { isExit, messageLine, type CodexLine } from "./CodexLine.ts"
import type { CodexMappingState, OutgoingMessage, StepResult } from "./CodexMappingState.ts"
import type { JsonRpcTransport } from "./CodexTransport.ts"
import { mapPeerLines } from "../kernel/JsonRpcPeer.ts"
import { definedFields } from "../../util/definedFields.ts"

/**
 * The Codex session on the kernel's `SessionRunner`: every input — a provider message, a
 * message we send, the exit — goes through the pure mapping under one lock, its events are
 * emitted (persisted) in order, and only then is the new state committed and anything written
 * to the provider. So an answer is on record before Codex sees it, and events never interleave.
 * What is Codex's: its requests' responses (`call`), waiting for a state (`waitFor`), one exit.
 */

export interface SessionCore {
  /** The committed state, read under the lock (so after any input being mapped right now). */
  readonly state: Effect.Effect<CodexMappingState>
  /** The committed state without waiting (for checks that must not block). */
  readonly peek: () => CodexMappingState
  /**
   * Maps `input`, emits its events, then commits and runs `after` (the write to the provider),
   * all under the lock. With `strict`, an emit failure aborts before commit and write.
   */
  readonly apply: <E = never>(
    input: CodexLine | ((state: CodexMappingState) => StepResult),
    options?: {
      readonly strict?: boolean
      /** Checked under the lock before mapping: a failure aborts with nothing emitted or sent. */
      readonly guard?: (state: CodexMappingState) => AdapterError | undefined
      readonly after?: Effect.Effect<void, E>
    }
  ) => Effect.Effect<void, AdapterError | E>
  /** Sends a request through the mapping (so replay sees it too) and waits for its result. */
  readonly call: (
    method: string,
    params: unknown,
    guard?: (state: CodexMappingState) => AdapterError | undefined
  ) => Effect.Effect<unknown, AdapterError>
  /** Resolves once the committed state satisfies `predicate`, or the provider has exited. */
  readonly waitFor: (predicate: (state: CodexMappingState) => boolean) => Effect.Effect<void>
  readonly exitMapped: () => boolean
}

export const makeCodexSessionCore = (
  transport: JsonRpcTransport,
  initial: CodexMappingState,
  emit: EmitRuntimeEvent,
  /** A burst's events in one transaction (the server's); without it, one by one. */
  emitAll?: EmitRuntimeEvents
): Effect.Effect<SessionCore, never, Scope.Scope> =>
  Effect.gen(function* () {
    let exited = false
    const waiters: Array<{
      readonly predicate: (s: CodexMappingState) => boolean
      readonly done: Deferred.Deferred<void>
    }> = []
    const runner = yield* makeSessionRunner<
      CodexMappingState,
      CodexLine | ((state: CodexMappingState) => StepResult),
      OutgoingMessage
    >({
      provider: "codex",
      threadId: initial.threadId,
      initial,
      step: (state, input) => (typeof input === "function" ? input(state) : step(state, input)),
      eventId: eventIds(liveScope(initial.threadId)),
      emit,
      emitAll,
      write: (reply) => Effect.ignore(transport.write(reply))
    })
    /** After each commit: the waiters whose predicate now holds (or all, once the provider exited). */
    const notify = Effect.sync(() => {
      const state = runner.peek()
      for (const waiter of [...waiters]) {
        if (waiter.predicate(state) || exited) {
          waiters.splice(waiters.indexOf(waiter), 1)
          Deferred.doneUnsafe(waiter.done, Effect.void)
        }
      }
    })
    /** The exit is mapped once, however many times it is offered (the reader, the finalizer). */
    const exitMappedAlready = adapterError("provider_exited", "the exit is mapped already")

    /** The exit is mapped once: refused when it was already. */
    const exitOnce = (input: CodexLine | ((state: CodexMappingState) => StepResult)) => {
      if (typeof input === "function" || !isExit(input)) return undefined
      if (exited) return exitMappedAlready
      exited = true
      return undefined
    }

    const apply: SessionCore["apply"] = (input, options) =>
      runner
        .apply(input, {
          guard: (state) => exitOnce(input) ?? options?.guard?.(state),
          // The mapping returns values: a refused answer leaves no state behind to undo.
          ...(options?.strict === true ? { strict: { rollback: () => undefined } } : {}),
          after: Effect.andThen(notify, options?.after ?? Effect.void)
        })
        .pipe(Effect.asVoid)

    const call: SessionCore["call"] = (method, params, guard) =>
      Effect.gen(function* () {
        const request = transport.prepareRequest(method, params)
        yield* apply(messageLine("out", request.msg), {
          after: transport.write(request.msg),
          ...definedFields({ guard })
        }).pipe(Effect.tapError(() => Effect.sync(request.release)))
        return yield* request.response
      })

    const waitFor: SessionCore["waitFor"] = (predicate) =>
      Effect.suspend(() => {
        if (predicate(runner.peek()) || exited) return Effect.void
        const done = Deferred.makeUnsafe<void>()
        waiters.push({ predicate, done })
        return Deferred.await(done)
      })

    // The single reader: provider output is mapped strictly in arrival order.
    yield* Effect.forkScoped(
      mapPeerLines(
        transport,
        (lines) => runner.applyAll(lines, (line) => ({ guard: () => exitOnce(line), after: notify })),
        isExit
      )
    )

    return {
      state: runner.state,
      peek: runner.peek,
      apply,
      call,
      waitFor,
      exitMapped: () => exited
    } satisfies SessionCore
  })
