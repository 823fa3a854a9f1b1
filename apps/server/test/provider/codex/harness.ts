import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { OperatingMode, RuntimeEvent, ThreadId } from "@planbridge/contracts"
import { Deferred, Effect, Scope } from "effect"
import type { AdapterError, EmitRuntimeEvent, EmitRuntimeEvents } from "../../../src/provider/ProviderAdapter.ts"
import {
  makeCodexAdapter,
  type IsolatedCodexAdapterOptions,
  type CodexProviderSession
} from "../../../src/provider/codex/CodexAdapter.ts"
import type { TranscriptEntry } from "../../../src/provider/kernel/transcript.ts"
import { startMockResponsesModel, type MockResponsesModel } from "../../support/mockResponsesModel.ts"
import { answeringAsTheServer, type AnsweringSession } from "../../support/answering.ts"

/**
 * A scripted model on loopback plus a real `codex app-server` session talking to it, both owned
 * by the caller's Scope. Reusable by database and WebSocket end-to-end tests: pass the `emit`
 * under test (e.g. the ingestion service); the harness records every event it accepted and
 * every message on the wire so a test can wait on a real signal instead of sleeping.
 */

export interface CodexHarness {
  readonly mock: MockResponsesModel
  /** Answers are checked against the emitted prompt first, as the server does. */
  readonly session: AnsweringSession<CodexProviderSession>
  readonly cwd: string
  /** Events `emit` and `emitAll` accepted, in order. */
  readonly events: ReadonlyArray<RuntimeEvent>
  /** The size of every `emitAll` accepted: the bursts the session recorded at once. */
  readonly batches: ReadonlyArray<number>
  /** Both directions of the JSON-RPC wire, with milliseconds since start (a transcript). */
  readonly traffic: ReadonlyArray<{ readonly t: number; readonly entry: TranscriptEntry }>
  /** Resolves with the first accepted event (already seen or future) that matches. */
  readonly waitForEvent: <T extends RuntimeEvent["type"]>(
    type: T,
    predicate?: (event: Extract<RuntimeEvent, { readonly type: T }>) => boolean
  ) => Effect.Effect<Extract<RuntimeEvent, { readonly type: T }>>
}

export interface CodexHarnessOptions {
  readonly threadId?: ThreadId
  readonly mode?: OperatingMode
  /** Persisting emit under test; events are recorded after it accepts them. */
  readonly emit?: EmitRuntimeEvent
  /**
   * The same for a burst; the session is always given an `emitAll`, as the server gives it. Without
   * this option it calls `emit` for each event of the burst.
   */
  readonly emitAll?: EmitRuntimeEvents
  readonly adapter?: Partial<IsolatedCodexAdapterOptions>
  /** Runs the user's own Codex (`credentials: "user"`) with this environment instead of an isolated home. */
  readonly userEnv?: Readonly<Record<string, string>>
  /** The session's working directory (default: a fresh temporary directory, removed afterwards). */
  readonly cwd?: string
  /** How long `waitForEvent` waits before failing the test (default 15 s). */
  readonly waitTimeoutMs?: number
  /** An already-running mock (to script it before the session starts); otherwise one is started. */
  readonly mock?: MockResponsesModel
}

/**
 * The `codex.js` the real-peer tests run: the pinned one, or another version's when
 * `PLANBRIDGE_TEST_CODEX_JS` names it (`npm run drift` runs a subset against the newest release).
 */
export const codexJsUnderTest = (): string | undefined => {
  const path = process.env.PLANBRIDGE_TEST_CODEX_JS
  return path !== undefined && path !== "" ? path : undefined
}

const commandUnderTest = () => {
  const codexJs = codexJsUnderTest()
  return codexJs !== undefined ? { command: { command: process.execPath, args: [codexJs, "app-server"] } } : {}
}

export const startCodexHarness = (
  options: CodexHarnessOptions = {}
): Effect.Effect<CodexHarness, AdapterError, Scope.Scope> =>
  Effect.gen(function* () {
    const mock =
      options.mock ??
      (yield* Effect.acquireRelease(
        Effect.promise(() => startMockResponsesModel()),
        (m) => Effect.promise(() => m.close())
      ))
    const cwd =
      options.cwd ??
      (yield* Effect.acquireRelease(
        Effect.promise(() => mkdtemp(join(tmpdir(), "planbridge-codex-cwd-"))),
        (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
      ))
    const events: Array<RuntimeEvent> = []
    const traffic: Array<{ t: number; entry: TranscriptEntry }> = []
    const started = Date.now()
    const waiters: Array<{
      readonly match: (e: RuntimeEvent) => boolean
      readonly done: Deferred.Deferred<RuntimeEvent>
    }> = []
    const batches: Array<number> = []
    const accept = (event: RuntimeEvent) => {
      events.push(event)
      for (const waiter of [...waiters]) {
        if (waiter.match(event)) {
          waiters.splice(waiters.indexOf(waiter), 1)
          Deferred.doneUnsafe(waiter.done, Effect.succeed(event))
        }
      }
    }
    const emit: EmitRuntimeEvent = (event) =>
      Effect.gen(function* () {
        if (options.emit !== undefined) yield* options.emit(event)
        accept(event)
      })
    const emitAll: EmitRuntimeEvents = (burst) =>
      Effect.gen(function* () {
        if (options.emitAll !== undefined) yield* options.emitAll(burst)
        else if (options.emit !== undefined) for (const event of burst) yield* options.emit(event)
        batches.push(burst.length)
        for (const event of burst) accept(event)
      })
    const onTraffic = (entry: TranscriptEntry) => traffic.push({ t: Date.now() - started, entry })
    const adapter = makeCodexAdapter(
      options.userEnv !== undefined
        ? { credentials: "user", userEnv: options.userEnv, requestTimeoutMs: 20_000, onTraffic, ...commandUnderTest() }
        : {
            model: "gpt-5.5",
            baseUrl: mock.baseUrl,
            envKey: "PLANBRIDGE_MOCK_KEY",
            apiKey: "mock-key",
            requestTimeoutMs: 20_000,
            onTraffic,
            ...commandUnderTest(),
            ...options.adapter
          }
    )
    const session = yield* adapter.startSession({
      threadId: options.threadId ?? (`thread-${Date.now().toString(36)}` as ThreadId),
      cwd,
      mode: options.mode ?? "default",
      emit,
      emitAll
    })
    const waitForEvent: CodexHarness["waitForEvent"] = (type, predicate) =>
      Effect.suspend(() => {
        type E = Extract<RuntimeEvent, { readonly type: typeof type }>
        const match = (e: RuntimeEvent): boolean => e.type === type && (predicate === undefined || predicate(e as E))
        const seen = events.find(match)
        if (seen !== undefined) return Effect.succeed(seen as E)
        const done = Deferred.makeUnsafe<RuntimeEvent>()
        waiters.push({ match, done })
        return Deferred.await(done).pipe(
          Effect.map((e) => e as E),
          // A missing event fails fast and says what did arrive, instead of hanging the test.
          Effect.timeoutOrElse({
            duration: options.waitTimeoutMs ?? 15_000,
            orElse: () =>
              Effect.die(new Error(`no ${type} event arrived; got: ${events.map((e) => e.type).join(", ")}`))
          })
        )
      })
    return { mock, session: answeringAsTheServer(session, events), cwd, events, batches, traffic, waitForEvent }
  })

/** Runs `body` with a fresh harness and closes everything (the app-server's process group included). */
export const withCodexHarness = <A, E>(
  options: CodexHarnessOptions,
  body: (harness: CodexHarness) => Effect.Effect<A, E>
): Promise<A> => Effect.runPromise(Effect.scoped(Effect.flatMap(startCodexHarness(options), body)))
