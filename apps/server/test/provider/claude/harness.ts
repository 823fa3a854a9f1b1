import type { OperatingMode, RuntimeEvent, RuntimeEventOf, RuntimeEventType, ThreadId } from "@planbridge/contracts"
import { Effect, Exit, Scope } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeClaudeAdapter, type ClaudeAdapterOptions } from "../../../src/provider/claude/ClaudeAdapter.ts"
import type { ClaudeChecklistTools } from "../../../src/provider/claude/ClaudeUserEnv.ts"
import type { TranscriptLine, TranscriptMeta } from "../../../src/provider/kernel/transcript.ts"
import type { EmitRuntimeEvent, EmitRuntimeEvents, ProviderSession } from "../../../src/provider/ProviderAdapter.ts"
import { startMockMessagesModel, type MockMessagesModel } from "../../support/mockMessagesModel.ts"
import { answeringAsTheServer, type AnsweringSession } from "../../support/answering.ts"

/**
 * A real Claude Code session (Agent SDK + CLI) against the scripted model, for real-peer tests
 * here and the lead's end-to-end tests. Call `assertLoopbackOnly()` before starting one.
 */
export interface ClaudeHarness {
  readonly mock: MockMessagesModel
  /** Answers are checked against the emitted prompt first, as the server does. */
  readonly session: AnsweringSession<ProviderSession>
  readonly cwd: string
  /** Every event the session emitted, in order (also when a custom `emit` is given). */
  readonly events: ReadonlyArray<RuntimeEvent>
  /** What each recorded `emit` (one event) or `emitAll` (a burst) carried, in order: one entry a transaction. */
  readonly transactions: ReadonlyArray<ReadonlyArray<RuntimeEvent>>
  /** The session's transcript, meta line first: what `record-claude-fixtures` writes. */
  readonly transcript: ReadonlyArray<TranscriptMeta | TranscriptLine>
  /** The first event of `type` at index ≥ `after` that matches; rejects after `timeoutMs`. */
  readonly waitFor: <T extends RuntimeEventType>(
    type: T,
    options?: {
      readonly after?: number
      readonly where?: (event: RuntimeEventOf<T>) => boolean
      readonly timeoutMs?: number
    }
  ) => Promise<RuntimeEventOf<T>>
  readonly run: <A, E>(effect: Effect.Effect<A, E>) => Promise<A>
  readonly close: () => Promise<void>
}

export interface ClaudeHarnessOptions {
  readonly emit?: EmitRuntimeEvent
  /** When given, the session records bursts with it (one transaction each, as the server does). */
  readonly emitAll?: EmitRuntimeEvents
  readonly mode?: OperatingMode
  readonly threadId?: string
  readonly extraEnv?: Readonly<Record<string, string>>
  readonly checklistTools?: ClaudeChecklistTools
  /** Reuse a running mock model (its script is shared); by default each harness starts one. */
  readonly mock?: MockMessagesModel
  /** MCP servers for the session (the adapter's `mcpServers`). */
  readonly mcpServers?: ClaudeAdapterOptions["mcpServers"]
}

export const startClaudeHarness = async (options: ClaudeHarnessOptions = {}): Promise<ClaudeHarness> => {
  const mock = options.mock ?? (await startMockMessagesModel())
  const cwd = await mkdtemp(join(tmpdir(), "planbridge-claude-cwd-"))
  const events: Array<RuntimeEvent> = []
  const transcript: Array<TranscriptMeta | TranscriptLine> = []
  const listeners = new Set<() => void>()
  const transactions: Array<ReadonlyArray<RuntimeEvent>> = []
  const accept = (burst: ReadonlyArray<RuntimeEvent>) => {
    transactions.push(burst)
    events.push(...burst)
    for (const listener of [...listeners]) listener()
  }
  const emit: EmitRuntimeEvent = (event) =>
    Effect.gen(function* () {
      if (options.emit !== undefined) yield* options.emit(event)
      accept([event])
    })
  const recordAll = options.emitAll
  const emitAll: EmitRuntimeEvents | undefined =
    recordAll === undefined
      ? undefined
      : (burst) =>
          Effect.andThen(
            recordAll(burst),
            Effect.sync(() => accept(burst))
          )
  const adapter = makeClaudeAdapter({
    baseUrl: mock.baseUrl,
    ...(options.extraEnv !== undefined ? { extraEnv: options.extraEnv } : {}),
    ...(options.checklistTools !== undefined ? { checklistTools: options.checklistTools } : {}),
    ...(options.mcpServers !== undefined ? { mcpServers: options.mcpServers } : {}),
    transcript: (line) => transcript.push(line)
  })
  const scope = await Effect.runPromise(Scope.make())
  const cleanup = async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    if (options.mock === undefined) await mock.close()
    await rm(cwd, { recursive: true, force: true })
  }
  let session: ProviderSession
  try {
    session = await Effect.runPromise(
      adapter
        .startSession({
          threadId: (options.threadId ?? `thread-${Date.now()}`) as ThreadId,
          cwd,
          mode: options.mode ?? "plan",
          emit,
          ...(emitAll === undefined ? {} : { emitAll })
        })
        .pipe(Scope.provide(scope))
    )
  } catch (error) {
    await cleanup()
    throw error
  }

  const waitFor: ClaudeHarness["waitFor"] = (type, opts = {}) =>
    new Promise((resolve, reject) => {
      const matches = (event: RuntimeEvent, index: number) =>
        index >= (opts.after ?? 0) &&
        event.type === type &&
        (opts.where?.(event as RuntimeEventOf<typeof type>) ?? true)
      const check = () => {
        const index = events.findIndex(matches)
        if (index < 0) return false
        listeners.delete(check)
        clearTimeout(timer)
        resolve(events[index] as RuntimeEventOf<typeof type>)
        return true
      }
      const timer = setTimeout(() => {
        listeners.delete(check)
        reject(
          new Error(
            `no ${type} event within ${opts.timeoutMs ?? 20_000} ms; seen: ${events.map((e) => e.type).join(", ")}`
          )
        )
      }, opts.timeoutMs ?? 20_000)
      listeners.add(check)
      check()
    })

  return {
    mock,
    session: answeringAsTheServer(session, events),
    cwd,
    events,
    transactions,
    transcript,
    waitFor,
    run: (effect) => Effect.runPromise(effect),
    close: cleanup
  }
}
