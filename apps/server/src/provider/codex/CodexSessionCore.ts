import { Deferred, Effect } from "effect"
import { adapterError, type AdapterError, type EmitRuntimeEvent, type EmitRuntimeEvents } from "../ProviderAdapter.ts"
import { mapPeerLines } from "../kernel/JsonRpcPeer.ts"
import { makeSessionRunner } from "../kernel/SessionRunner.ts"
import { eventIds, liveScope } from "../kernel/ids.ts"
import { step } from "./CodexMapping.ts"
import { isExit, sentLine, type CodexLine } from "./CodexLine.ts"
import type { CodexMappingState, OutgoingMessage, StepResult } from "./CodexMappingState.ts"
import type { JsonRpcTransport } from "./CodexTransport.ts"
import { definedFields } from "../../util/definedFields.ts"

/**
 * The Codex session on the kernel's `SessionRunner`: every input — a provider message, a
 * message we send, the exit — goes through the pure mapping under one lock, its events are
 * emitted (persisted) in order, and only then is the new state committed and anything written
 * to the provider. So an answer is on record before Codex sees it, and events never interleave.
 * What is Codex's: its requests' responses (`call`), waiting for a state (`waitFor`), one exit.
 */

type Input = CodexLine | ((state: CodexMappingState) => StepResult)
/** Checked under the lock before mapping: a failure aborts with nothing emitted or sent. */
type Guard = (state: CodexMappingState) => AdapterError | undefined

export const makeCodexSessionCore = (
  transport: JsonRpcTransport,
  initial: CodexMappingState,
  emit: EmitRuntimeEvent,
  /** A burst's events in one transaction (the server's); without it, one by one. */
  emitAll?: EmitRuntimeEvents
) =>
  Effect.gen(function* () {
    let exited = false
    const waiters: Array<{
      readonly predicate: (s: CodexMappingState) => boolean
      readonly done: Deferred.Deferred<void>
    }> = []
    const runner = yield* makeSessionRunner<CodexMappingState, Input, OutgoingMessage>({
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
    const exitOnce = (input: Input) => {
      if (typeof input === "function" || !isExit(input)) return undefined
      if (exited) return adapterError("provider_exited", "the exit is mapped already")
      exited = true
      return undefined
    }

    /**
     * Maps `input`, emits its events, then commits and runs `after` (the write to the provider),
     * all under the lock. With `strict`, an emit failure aborts before commit and write.
     */
    const apply = <E = never>(
      input: Input,
      options?: { readonly strict?: boolean; readonly guard?: Guard; readonly after?: Effect.Effect<void, E> }
    ): Effect.Effect<void, AdapterError | E> =>
      runner
        .apply(input, {
          guard: (state) => exitOnce(input) ?? options?.guard?.(state),
          // The mapping returns values: a refused answer leaves no state behind to undo.
          strict: options?.strict === true,
          after: Effect.andThen(notify, options?.after ?? Effect.void)
        })
        .pipe(Effect.asVoid)

    // The single reader: provider output is mapped strictly in arrival order.
    yield* Effect.forkScoped(
      mapPeerLines(
        transport,
        (lines) => runner.applyAll(lines, (line) => ({ guard: () => exitOnce(line), after: notify })),
        isExit
      )
    )

    return {
      /** The committed state, read under the lock (so after any input being mapped right now). */
      state: runner.state,
      /** The committed state without waiting (for checks that must not block). */
      peek: runner.peek,
      apply,
      /** Sends a request through the mapping (so replay sees it too) and waits for its result. */
      call: (method: string, params: unknown, guard?: Guard): Effect.Effect<unknown, AdapterError> =>
        Effect.gen(function* () {
          const request = transport.prepareRequest(method, params)
          yield* apply(sentLine(request.msg), {
            after: transport.write(request.msg),
            ...definedFields({ guard })
          }).pipe(Effect.tapError(() => Effect.sync(request.release)))
          return yield* request.response
        }),
      /** Resolves once the committed state satisfies `predicate`, or the provider has exited. */
      waitFor: (predicate: (state: CodexMappingState) => boolean): Effect.Effect<void> =>
        Effect.suspend(() => {
          if (predicate(runner.peek()) || exited) return Effect.void
          const done = Deferred.makeUnsafe<void>()
          waiters.push({ predicate, done })
          return Deferred.await(done)
        }),
      exitMapped: () => exited
    }
  })
