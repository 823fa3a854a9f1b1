import { Deferred, Effect } from "effect"
import { makeSession } from "../kernel/Session.ts"
import { eventIds, liveScope } from "../kernel/ids.ts"
import type { TranscriptLine } from "../kernel/transcript.ts"
import type { StartSessionInput } from "../ProviderAdapter.ts"
import { COULD_NOT_PRESENT, nativeForOutcome, type DecisionPair, type NativeDecision } from "./ClaudeDecisions.ts"
import { step } from "./ClaudeMapping.ts"
import { initialClaudeState, type ClaudeReceipt } from "./ClaudeMappingState.ts"
import { cancelDecision, type ClaudeRequest, type Outcome } from "./ClaudeRequests.ts"
import type { ClaudeLine, ClaudeLocal } from "./ClaudeTranscript.ts"

/**
 * A Claude session on the kernel's `Session`: every transcript line — an SDK message, a
 * callback call, our decision — goes through the pure mapping with the session's ordinary
 * `apply` (SDK messages waiting at once: `applyAll`, one transaction, as Codex's and ACP's
 * lines), its events are emitted (persisted) in order, and only then are the receipts the
 * mapping owes written: a waiting `canUseTool`/`onElicitation` callback is handed what was
 * recorded for its request.
 *
 * Answer integrity, by construction: a callback waits on a Deferred registered before its call
 * is mapped (`awaitReceipt`), completed only by a receipt of the mapping (written after its line's events
 * were emitted), with what the mapping recorded — our decision's native form when the closing
 * line was our decision (strict: its events durable), else a denial matching the recorded
 * cancellation or exit. No other code completes it (`handOver`).
 */
export const makeClaudeSessionCore = Effect.fn("ClaudeSessionCore.make")(function* (deps: {
  readonly input: StartSessionInput
  /** Epoch ms of the meta line: transcript times `t` count from here. */
  readonly startedAt: number
  readonly transcript: ((line: TranscriptLine) => void) | undefined
  /** Runs an effect as a fiber of the session (the SDK calls us from plain promises). */
  readonly run: <A>(effect: Effect.Effect<A>) => Promise<A>
}) {
  const { input, startedAt } = deps
  /** Callbacks the CLI is blocked in, by tool use. Only `handOver` completes them. */
  const receipts = new Map<string, Deferred.Deferred<NativeDecision>>()
  /**
   * The native form of each decision of ours (answers in clear, never recorded), keyed by the
   * decision itself: a receipt's outcome is the very `decision` of the line that closed its
   * request. A decision whose events could not be recorded was never committed, so it is no
   * receipt's outcome and its native form reaches no callback: nothing to undo.
   */
  const chosen = new WeakMap<Outcome, NativeDecision>()
  const handOver = ({ toolUseID, outcome }: ClaudeReceipt) =>
    Effect.sync(() => {
      const native = outcome === undefined ? COULD_NOT_PRESENT : (chosen.get(outcome) ?? nativeForOutcome(outcome))
      const deferred = receipts.get(toolUseID)
      receipts.delete(toolUseID)
      if (deferred !== undefined) Deferred.doneUnsafe(deferred, Effect.succeed(native))
    })
  const session = yield* makeSession<ReturnType<typeof initialClaudeState>, ClaudeLine, ClaudeReceipt>({
    provider: "claude",
    threadId: input.threadId,
    initial: initialClaudeState(input.threadId),
    step,
    eventId: eventIds(liveScope(input.threadId)),
    emit: input.emit,
    emitAll: input.emitAll,
    write: handOver,
    ...(deps.transcript === undefined ? {} : { record: deps.transcript }),
    isExit: (line) => line.dir === "local" && line.msg.kind === "exit",
    openRequests: (state) => state.requests
  })
  /** Maps a line; true when every event was recorded (only a guard or a strict line can fail). */
  const record = (line: ClaudeLine): Effect.Effect<boolean> =>
    session.apply(line).pipe(Effect.catch(() => Effect.succeed(false)))
  const now = () => Date.now() - startedAt
  const local = (msg: ClaudeLocal): ClaudeLine => ({ t: now(), dir: "local", msg })

  /**
   * Resolves an open request. Under the session's lock, the request must still await us (the turn
   * may have ended since it was looked up); then the decision's events are recorded strictly:
   * only if every one of them was, the decision is committed and its native form handed to the
   * waiting callback. Otherwise the request stays open and nothing reaches the CLI.
   */
  const decide = (request: ClaudeRequest, { decision, native }: DecisionPair) =>
    Effect.suspend(() => {
      chosen.set(decision, native)
      const line = local({ kind: "decision", toolUseID: request.key, decision })
      return session.answer(request, line)
    })

  /** Cancels the open request at `key` (if it is still open), the CLI told `message`. */
  const cancel = (key: string, message: string, reason = "interrupted") =>
    Effect.suspend(() => {
      const open = session.peek().requests.get(key)
      if (open === undefined) return Effect.void
      return decide(open, { decision: cancelDecision(open, reason), native: { behavior: "deny", message } })
    })

  /**
   * An SDK callback (`canUseTool`, `onElicitation`): the Deferred it waits on registered before
   * its call is mapped, so that no receipt can miss it; `onAbort` run when its signal aborts; its
   * receipt taken. A call whose opening could not be recorded is cancelled at once: clients may
   * never have seen it.
   */
  const awaitReceipt = (key: string, line: ClaudeLine, signal: AbortSignal, onAbort: Effect.Effect<void>) =>
    Effect.gen(function* () {
      const receipt = Deferred.makeUnsafe<NativeDecision>()
      receipts.set(key, receipt)
      if (!(yield* record(line)))
        yield* Effect.ignore(cancel(key, COULD_NOT_PRESENT.message, "it could not be recorded"))
      // A line the mapping could not take (a bug, reported as mapping_failed) owes no receipt: deny.
      if (receipts.has(key) && !session.peek().callbacks.has(key))
        yield* handOver({ toolUseID: key, outcome: undefined })
      const abort = () => void deps.run(onAbort)
      signal.addEventListener("abort", abort, { once: true })
      if (signal.aborted) abort()
      const native = yield* Deferred.await(receipt)
      signal.removeEventListener("abort", abort)
      return native
    })

  // `applyAll`: SDK messages that were waiting at once (a burst), their events in one transaction.
  const { apply, applyAll, state, peek } = session
  return { apply, applyAll, state, peek, record, now, local, decide, cancel, awaitReceipt, run: deps.run }
})

export type ClaudeSessionCore = Effect.Success<ReturnType<typeof makeClaudeSessionCore>>
