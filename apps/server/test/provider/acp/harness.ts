import type { RuntimeEvent, RuntimeEventOf, RuntimeEventType, ThreadId } from "@planbridge/contracts"
import { Effect, Exit, Scope } from "effect"
import type { AdapterError, ProviderAdapter, ProviderSession } from "../../../src/provider/ProviderAdapter.ts"
import { acpReplayMapping } from "../../../src/provider/acp/AcpReplay.ts"
import { replay } from "../../../src/provider/kernel/replay.ts"
import type { AcpSessionInput } from "../../../src/provider/acp/AcpSession.ts"
import { makeTranscriptWriter, type TranscriptWriter } from "../../../src/provider/kernel/transcript.ts"
import { answeringAsTheServer, type AnsweringSession } from "../../support/answering.ts"

/** Collects emitted events and lets a test wait on them (a real signal, never a sleep). */
export class EventLog {
  readonly events: Array<RuntimeEvent> = []
  /** The size of every `emitAll`: what the session recorded in one transaction, as the server's. */
  readonly batches: Array<number> = []
  private readonly waiters = new Set<() => void>()

  readonly emit = (event: RuntimeEvent) =>
    Effect.sync(() => {
      this.events.push(event)
      for (const waiter of [...this.waiters]) waiter()
    })

  readonly emitAll = (events: ReadonlyArray<RuntimeEvent>) =>
    Effect.sync(() => {
      this.batches.push(events.length)
      this.events.push(...events)
      for (const waiter of [...this.waiters]) waiter()
    })

  ofType<T extends RuntimeEventType>(type: T): Array<RuntimeEventOf<T>> {
    return this.events.filter((e): e is RuntimeEventOf<T> => e.type === type)
  }

  /** Resolves with the first event (from index `from`) matching, or rejects after `ms`. */
  waitFor<T extends RuntimeEventType>(
    type: T,
    predicate: (event: RuntimeEventOf<T>) => boolean = () => true,
    options: { readonly from?: number; readonly ms?: number } = {}
  ): Promise<RuntimeEventOf<T>> {
    const find = () =>
      this.events
        .slice(options.from ?? 0)
        .find((e): e is RuntimeEventOf<T> => e.type === type && predicate(e as RuntimeEventOf<T>))
    return new Promise((resolve, reject) => {
      const found = find()
      if (found !== undefined) return resolve(found)
      const timer = setTimeout(() => {
        this.waiters.delete(check)
        reject(
          new Error(
            `no ${type} event within ${options.ms ?? 20_000} ms; got: ${this.events.map((e) => e.type).join(", ")}`
          )
        )
      }, options.ms ?? 20_000)
      const check = () => {
        const hit = find()
        if (hit === undefined) return
        clearTimeout(timer)
        this.waiters.delete(check)
        resolve(hit)
      }
      this.waiters.add(check)
    })
  }

  /** Concatenated assistant text deltas. */
  assistantText(turnId?: string): string {
    return this.ofType("content.delta")
      .filter((e) => e.payload.streamKind === "assistant_text" && (turnId === undefined || e.turnId === turnId))
      .map((e) => e.payload.delta)
      .join("")
  }
}

export interface OpenSession {
  /** Answers are checked against the emitted prompt first, as the server does. */
  readonly session: AnsweringSession<ProviderSession>
  readonly log: EventLog
  readonly close: () => Promise<void>
}

export const openSession = async (
  adapter: ProviderAdapter & {
    readonly startSession: (input: AcpSessionInput) => ReturnType<ProviderAdapter["startSession"]>
  },
  input: Omit<AcpSessionInput, "emit" | "emitAll">
): Promise<OpenSession> => {
  const log = new EventLog()
  const scope = Effect.runSync(Scope.make())
  try {
    const session = await Effect.runPromise(
      Scope.provide(scope)(adapter.startSession({ ...input, emit: log.emit, emitAll: log.emitAll }))
    )
    return {
      session: answeringAsTheServer(session, log.events),
      log,
      close: () => Effect.runPromise(Scope.close(scope, Exit.void))
    }
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw error
  }
}

/** Runs an effect expected to fail with an AdapterError and returns that error. */
export const adapterFailure = async (effect: Effect.Effect<unknown, AdapterError>): Promise<AdapterError> => {
  const exit = await Effect.runPromise(Effect.exit(effect))
  if (Exit.isSuccess(exit)) throw new Error("expected an AdapterError, got success")
  const error = exit.cause.reasons.find((r) => r._tag === "Fail")
  if (error === undefined || error._tag !== "Fail")
    throw new Error(`expected an AdapterError, got ${String(exit.cause)}`)
  return error.error
}

export const run = <A>(effect: Effect.Effect<A, AdapterError>): Promise<A> => Effect.runPromise(effect)

export const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * The live session and `replay` must agree: the recorded transcript replays to the
 * same events, up to event ids and timestamps. Returns the live events' types for reporting.
 */
export const replayOfLive = async (recorder: TranscriptWriter, log: EventLog, threadId: ThreadId) => {
  const exited = log.ofType("session.exited")[0]
  if (exited !== undefined) {
    const { exitKind, exitCode, signal } = exited.payload
    recorder.record({ dir: "local", msg: { kind: "exit", exitKind, exitCode, signal } })
  }
  const replayed = await Effect.runPromise(replay(acpReplayMapping, recorder.lines(), { threadId }))
  const strip = ({ eventId: _e, createdAt: _c, ...rest }: RuntimeEvent) => rest
  return { live: log.events.map(strip), replayed: replayed.map(strip) }
}

/** An adapter option set that records the transcript with a fixed id prefix (replayable ids). */
export const recording = (provider: string, threadId: ThreadId) => {
  const idPrefix = `${threadId}:r`
  const recorder = makeTranscriptWriter({ provider, agent: "test", idPrefix })
  return { recorder, options: { tap: recorder.record, idPrefix: () => idPrefix } }
}
