import { Deferred, Effect, Scope, Semaphore } from "effect"
import type { RuntimeEvent } from "@planbridge/contracts"
import { AdapterError, type EmitRuntimeEvent } from "../ProviderAdapter.ts"
import { isExit, step, type MappingInput } from "./CodexMapping.ts"
import type { CodexMappingState, MappingContext, StepResult } from "./CodexMappingState.ts"
import type { JsonRpcTransport, TransportError } from "./CodexTransport.ts"
import { definedFields } from "../../util/definedFields.ts"

/**
 * The one place where the live session changes state: every input — a provider message, a
 * message we send, the exit — goes through the pure mapping under one lock, its events are
 * emitted (persisted) in order, and only then is the new state committed and anything written
 * to the provider. So an answer is on record before Codex sees it, and events never interleave.
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
    input: MappingInput | ((state: CodexMappingState) => StepResult),
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

export const transportFailure = (error: TransportError): AdapterError =>
  new AdapterError({ reason: error.reason === "start_failed" ? "start_failed" : error.reason, message: error.message })

export const makeSessionCore = (
  transport: JsonRpcTransport,
  initial: CodexMappingState,
  ctx: MappingContext,
  emit: EmitRuntimeEvent
): Effect.Effect<SessionCore, never, Scope.Scope> =>
  Effect.gen(function* () {
    const lock = yield* Semaphore.make(1)
    let state = initial
    let exited = false
    const waiters: Array<{
      readonly predicate: (s: CodexMappingState) => boolean
      readonly done: Deferred.Deferred<void>
    }> = []

    const commit = (next: CodexMappingState) => {
      state = next
      for (const waiter of [...waiters]) {
        if (waiter.predicate(state) || exited) {
          waiters.splice(waiters.indexOf(waiter), 1)
          Deferred.doneUnsafe(waiter.done, Effect.void)
        }
      }
    }

    const apply: SessionCore["apply"] = (input, options) =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          if (typeof input !== "function" && isExit(input)) {
            if (exited) return
            exited = true
          }
          const refused = options?.guard?.(state)
          if (refused !== undefined) return yield* Effect.fail(refused)
          const result = typeof input === "function" ? input(state) : step(state, input, ctx)
          for (const event of result.events) {
            const emitted = yield* Effect.exit(emit(event))
            if (emitted._tag === "Success") continue
            if (options?.strict === true) {
              return yield* Effect.fail(
                new AdapterError({ reason: "protocol", message: `could not record ${event.type}; nothing was sent` })
              )
            }
            // What the provider did happened regardless; say that its record is missing, if we can.
            yield* Effect.ignore(
              emit({
                type: "runtime.error",
                eventId: ctx.nextEventId() as RuntimeEvent["eventId"],
                provider: "codex",
                threadId: state.threadId,
                createdAt: ctx.now() as RuntimeEvent["createdAt"],
                payload: {
                  code: "codex.emit_failed",
                  message: `could not record ${event.type} ${event.eventId}`,
                  fatal: false
                }
              })
            )
          }
          commit(result.state)
          for (const reply of result.replies) yield* Effect.ignore(transport.write(reply))
          if (options?.after !== undefined) yield* options.after
        })
      )

    const call: SessionCore["call"] = (method, params, guard) =>
      Effect.gen(function* () {
        const request = transport.prepareRequest(method, params)
        yield* apply(
          { dir: "out", msg: request.msg },
          { after: Effect.mapError(transport.write(request.msg), transportFailure), ...definedFields({ guard }) }
        ).pipe(Effect.tapError(() => Effect.sync(request.release)))
        return yield* Effect.mapError(request.response, transportFailure)
      })

    const waitFor: SessionCore["waitFor"] = (predicate) =>
      Effect.suspend(() => {
        if (predicate(state) || exited) return Effect.void
        const done = Deferred.makeUnsafe<void>()
        waiters.push({ predicate, done })
        return Deferred.await(done)
      })

    // The single reader: provider output is mapped strictly in arrival order.
    yield* Effect.forkScoped(
      Effect.gen(function* () {
        while (true) {
          const input = yield* transport.take
          yield* Effect.ignore(apply(input))
          if (isExit(input)) return
        }
      })
    )

    return {
      state: lock.withPermits(1)(Effect.sync(() => state)),
      peek: () => state,
      apply,
      call,
      waitFor,
      exitMapped: () => exited
    } satisfies SessionCore
  })
