import { Deferred, Effect } from "effect"
import { randomUUID } from "node:crypto"
import { makeSessionRunner } from "../kernel/SessionRunner.ts"
import { stillAwaiting } from "../kernel/OpenRequests.ts"
import type { TranscriptLine } from "../kernel/transcript.ts"
import type { StartSessionInput } from "../ProviderAdapter.ts"
import { COULD_NOT_PRESENT, nativeForOutcome, type DecisionPair, type NativeDecision } from "./ClaudeDecisions.ts"
import { step } from "./ClaudeMapping.ts"
import { initialClaudeState, type ClaudeReceipt } from "./ClaudeMappingState.ts"
import { cancelDecision, type ClaudeRequest } from "./ClaudeRequests.ts"
import type { ClaudeLine, ClaudeLocal, Decision } from "./ClaudeTranscript.ts"

/**
 * A Claude session on the kernel's `SessionRunner`: every transcript line — an SDK message, a
 * callback call, our decision — goes through the pure mapping under one lock, its events are
 * emitted (persisted) in order, and only then are the receipts the mapping owes written: a
 * waiting `canUseTool` callback is handed what was recorded for its request.
 *
 * Answer integrity, by construction: a callback waits on a Deferred registered under the lock
 * before its call is mapped (`awaitReceipt`), completed only by a receipt of the mapping (written
 * after its line's events were emitted), with what the mapping recorded — our decision's native
 * form when the closing line was our decision (strict: its events durable), else a denial
 * matching the recorded cancellation or exit. No other code completes it (`handOver`).
 */
export const makeClaudeSessionCore = Effect.fn("ClaudeSessionCore.make")(function* (deps: {
  readonly input: StartSessionInput
  /** Epoch ms of the meta line: transcript times `t` count from here. */
  readonly startedAt: number
  readonly transcript: ((line: TranscriptLine) => void) | undefined
}) {
  const { input, startedAt } = deps
  /** Callbacks the CLI is blocked in, by tool use. Only `handOver` completes them. */
  const receipts = new Map<string, Deferred.Deferred<NativeDecision>>()
  /** The native form of our recorded decisions (answers in clear), until their callback takes it. */
  const chosen = new Map<string, NativeDecision>()
  const handOver = ({ toolUseID, outcome }: ClaudeReceipt) =>
    Effect.sync(() => {
      const native = outcome === undefined ? COULD_NOT_PRESENT : (chosen.get(toolUseID) ?? nativeForOutcome(outcome))
      chosen.delete(toolUseID)
      const deferred = receipts.get(toolUseID)
      receipts.delete(toolUseID)
      if (deferred !== undefined) Deferred.doneUnsafe(deferred, Effect.succeed(native))
    })
  const runner = yield* makeSessionRunner<ReturnType<typeof initialClaudeState>, ClaudeLine, ClaudeReceipt>({
    provider: "claude",
    threadId: input.threadId,
    initial: initialClaudeState(input.threadId),
    step,
    eventId: randomUUID,
    emit: input.emit,
    emitAll: input.emitAll,
    write: handOver,
    ...(deps.transcript === undefined ? {} : { record: deps.transcript })
  })
  const { withLock } = runner
  /** Maps a line (the caller holds the lock); true when every event was recorded. */
  const recordUnlocked = (line: ClaudeLine): Effect.Effect<boolean> =>
    // Only a guard or a strict line can fail, and a plain line has neither.
    runner.applyUnlocked(line).pipe(Effect.catch(() => Effect.succeed(false)))
  const record = (line: ClaudeLine) => withLock(recordUnlocked(line))
  /** Maps a line of ours (the caller holds the lock): if its events cannot be recorded, it did not happen. */
  const recordStrictly = (line: ClaudeLine) => runner.applyUnlocked(line, { strict: { rollback: () => undefined } })
  const now = () => Date.now() - startedAt
  const local = (msg: ClaudeLocal): ClaudeLine => ({ t: now(), dir: "local", msg })

  /**
   * Resolves an open request (under the lock): the decision's events are recorded first; only
   * if every one of them was, the decision is committed and handed to the waiting callback.
   * Otherwise the request stays open and nothing reaches the CLI.
   */
  const decideUnlocked = (request: ClaudeRequest, decision: Decision, native: NativeDecision) =>
    Effect.gen(function* () {
      const refused = stillAwaiting(runner.peek().requests, request)
      if (refused !== undefined) return yield* Effect.fail(refused)
      chosen.set(request.key, native)
      const line = local({ kind: "decision", toolUseID: request.key, decision })
      yield* runner.applyUnlocked(line, { strict: { rollback: () => chosen.delete(request.key) } })
    })
  const decide = (request: ClaudeRequest, { decision, native }: DecisionPair) =>
    withLock(decideUnlocked(request, decision, native))

  const cancel = (toolUseID: string, message: string) =>
    withLock(
      Effect.suspend(() => {
        const open = runner.peek().requests.get(toolUseID)
        return open === undefined
          ? Effect.void
          : decideUnlocked(open, cancelDecision(open, "interrupted"), { behavior: "deny", message })
      })
    )

  /**
   * Maps a `canUseTool` call (under the lock) and returns the Deferred its callback waits on,
   * registered before the line is mapped so that no receipt can miss it. A call whose opening
   * could not be recorded is cancelled at once: clients may never have seen it.
   */
  const call = (toolUseID: string, line: ClaudeLine) =>
    withLock(
      Effect.gen(function* () {
        const deferred = Deferred.makeUnsafe<NativeDecision>()
        receipts.set(toolUseID, deferred)
        const recorded = yield* recordUnlocked(line)
        const open = runner.peek().requests.get(toolUseID)
        if (!recorded && open !== undefined)
          yield* Effect.ignore(
            decideUnlocked(open, cancelDecision(open, "it could not be recorded"), COULD_NOT_PRESENT)
          )
        // A line the mapping could not take (a bug, reported as mapping_failed) owes no receipt: deny.
        if (receipts.has(toolUseID) && !runner.peek().callbacks.has(toolUseID))
          yield* handOver({ toolUseID, outcome: undefined })
        return deferred
      })
    )

  const { state, peek } = runner
  return { withLock, state, peek, record, recordStrictly, now, local, decide, cancel, call }
})

export type ClaudeSessionCore = Effect.Success<ReturnType<typeof makeClaudeSessionCore>>
