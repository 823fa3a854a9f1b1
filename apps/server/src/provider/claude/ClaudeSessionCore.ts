import { Deferred, Effect } from "effect"
import { randomUUID } from "node:crypto"
import { makeSessionRunner } from "../kernel/SessionRunner.ts"
import { failAdapter, type StartSessionInput } from "../ProviderAdapter.ts"
import { nativeForOutcome, type NativeDecision } from "./ClaudeDecisions.ts"
import { step, type ClaudeMapper } from "./ClaudeMapping.ts"
import { cancelDecision, type OpenRequest } from "./ClaudeRequests.ts"
import type { Decision, LocalLine, NativeLine } from "./ClaudeTranscript.ts"

export type LocalLineWithoutTime = LocalLine extends infer L ? (L extends LocalLine ? Omit<L, "t"> : never) : never

/**
 * A Claude session on the kernel's `SessionRunner`: every transcript line — an SDK message, a
 * callback call, our decision — is mapped under one lock, its events emitted (persisted) in
 * order, and only then is a waiting `canUseTool` callback handed what was recorded for it.
 *
 * Answer integrity, by construction: a callback waits on a Deferred that is created under the
 * lock right after its call was mapped (`wait`), and completed only under the lock, only once
 * the mapper has closed that request, and only with what the mapper recorded — our decision's
 * native form when the closing line was our decision (its events durable), else a denial
 * matching the recorded cancellation or exit. No other code completes it (`handOver`).
 */
export const makeClaudeSessionCore = Effect.fn("ClaudeSessionCore.make")(function* (deps: {
  readonly mapper: ClaudeMapper
  readonly input: StartSessionInput
  /** Epoch ms of the meta line: transcript times `t` count from here. */
  readonly startedAt: number
  readonly transcript: ((line: NativeLine) => void) | undefined
}) {
  const { mapper, input, startedAt } = deps
  /** Callbacks the CLI is blocked in, by tool use. Only `handOver` completes them. */
  const waiting = new Map<string, Deferred.Deferred<NativeDecision>>()
  /** The native form of our recorded decisions, until their callback takes it. */
  const chosen = new Map<string, NativeDecision>()
  /** Under the lock: every waiting callback whose request is closed gets what was recorded for it. */
  const handOver = () => {
    for (const [toolUseID, deferred] of waiting) {
      const outcome = mapper.outcomeOf(toolUseID)
      if (outcome === undefined) continue
      waiting.delete(toolUseID)
      const native = chosen.get(toolUseID) ?? nativeForOutcome(outcome)
      chosen.delete(toolUseID)
      Deferred.doneUnsafe(deferred, Effect.succeed(native))
    }
  }
  // The mapper keeps its state in place; the SDK is answered through callbacks, not replies.
  const runner = yield* makeSessionRunner<ClaudeMapper, NativeLine, never>({
    provider: "claude",
    threadId: input.threadId,
    initial: mapper,
    step,
    eventId: randomUUID,
    emit: input.emit,
    emitAll: input.emitAll,
    write: () => Effect.void,
    ...(deps.transcript === undefined ? {} : { record: deps.transcript })
  })
  const { withLock } = runner
  /** Maps a line (the caller holds the lock); true when every event was recorded. */
  const recordUnlocked = (line: NativeLine): Effect.Effect<boolean> =>
    runner.applyUnlocked(line).pipe(
      Effect.tap(() => Effect.sync(handOver)),
      // Only a guard or a strict line can fail, and a plain line has neither.
      Effect.catch(() => Effect.succeed(false))
    )
  const record = (line: NativeLine) => withLock(recordUnlocked(line))
  const now = () => Date.now() - startedAt
  const local = (line: LocalLineWithoutTime): LocalLine => ({ ...line, t: now() }) as LocalLine

  /**
   * Resolves an open request (under the lock): the decision's events are recorded first; only
   * if every one of them was, the decision is committed and handed to the waiting callback.
   * Otherwise the request stays open and nothing reaches the CLI.
   */
  const decideUnlocked = (request: OpenRequest, decision: Decision, native: NativeDecision) =>
    Effect.gen(function* () {
      if (!mapper.isOpen(request.toolUseID))
        return yield* failAdapter("prompt_not_pending", "the request is no longer pending")
      const line = local({ _local: "decision", toolUseID: request.toolUseID, decision })
      yield* runner.applyUnlocked(line, { strict: { rollback: () => mapper.reopen(request) } })
      chosen.set(request.toolUseID, native)
      handOver()
    })
  const decide = (request: OpenRequest, decision: Decision, native: NativeDecision) =>
    withLock(decideUnlocked(request, decision, native))

  const cancel = (toolUseID: string, message: string) =>
    withLock(
      Effect.suspend(() => {
        const open = mapper.openRequests().find((r) => r.toolUseID === toolUseID)
        return open === undefined
          ? Effect.void
          : decideUnlocked(open, cancelDecision(open, "interrupted"), { behavior: "deny", message })
      })
    )

  /** Under the lock, right after a callback's call was mapped: the Deferred it waits on. */
  const wait = (toolUseID: string): Deferred.Deferred<NativeDecision> => {
    const deferred = Deferred.makeUnsafe<NativeDecision>()
    waiting.set(toolUseID, deferred)
    return deferred
  }

  return { withLock, record, recordUnlocked, now, local, decide, decideUnlocked, cancel, wait, handOver }
})

export type ClaudeSessionCore = Effect.Success<ReturnType<typeof makeClaudeSessionCore>>
