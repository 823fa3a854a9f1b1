import type { EventId } from "@planbridge/contracts"
import { Cause, Deferred, Effect, Semaphore } from "effect"
import { randomUUID } from "node:crypto"
import { stampDraft } from "../kernel/EventDraft.ts"
import { EmitError, failAdapter, type StartSessionInput } from "../ProviderAdapter.ts"
import { nativeForOutcome, type NativeDecision } from "./ClaudeDecisions.ts"
import type { ClaudeMapper, EventDraft } from "./ClaudeMapping.ts"
import { cancelDecision, type OpenRequest } from "./ClaudeRequests.ts"
import type { Decision, LocalLine, NativeLine } from "./ClaudeTranscript.ts"
import { definedFields } from "../../util/definedFields.ts"

export type LocalLineWithoutTime = LocalLine extends infer L ? (L extends LocalLine ? Omit<L, "t"> : never) : never

/**
 * The one place where a Claude session changes state (the model is CodexSessionCore.ts): every
 * transcript line — an SDK message, a callback call, our decision — is mapped under one lock,
 * its events emitted (persisted) in order, and only then is a waiting `canUseTool` callback
 * handed what was recorded for it.
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
  const config = { transcript: deps.transcript }
  const lock = yield* Semaphore.make(1)
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

  const stamp = (draft: EventDraft) =>
    stampDraft(draft, {
      eventId: randomUUID() as EventId,
      createdAt: new Date().toISOString(),
      provider: "claude",
      threadId: input.threadId
    })
  const emitFailed = (draft: EventDraft, error: EmitError) =>
    Effect.ignore(
      input.emit(
        stamp({
          type: "runtime.error",
          ...definedFields({ raw: draft.raw }),
          payload: {
            code: "claude.emit_failed",
            message: `could not record ${draft.type}: ${error.message}`,
            fatal: false
          }
        })
      )
    )
  /**
   * Emits drafts in order. What the CLI did happened regardless: a draft that cannot be
   * recorded is reported as one `runtime.error` and the rest still go out. Returns whether all
   * were recorded.
   */
  const emitAll = (drafts: ReadonlyArray<EventDraft>) =>
    Effect.gen(function* () {
      let all = true
      for (const draft of drafts) {
        const emitted = yield* Effect.exit(input.emit(stamp(draft)))
        if (emitted._tag === "Success") continue
        all = false
        yield* emitFailed(
          draft,
          emitted.cause.reasons.find(Cause.isFailReason)?.error ?? new EmitError({ message: "defect" })
        )
      }
      return all
    })

  const recordUnlocked = (line: NativeLine) =>
    Effect.gen(function* () {
      config.transcript?.(line)
      const recorded = yield* emitAll(mapper.step(line))
      handOver()
      return recorded
    })
  const record = (line: NativeLine) => lock.withPermit(recordUnlocked(line))
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
      for (const draft of mapper.step(line)) {
        const emitted = yield* Effect.exit(input.emit(stamp(draft)))
        if (emitted._tag === "Success") continue
        mapper.reopen(request)
        const message = `could not record ${draft.type}; nothing was sent to Claude`
        yield* emitFailed(draft, new EmitError({ message }))
        return yield* failAdapter("protocol", message)
      }
      config.transcript?.(line)
      chosen.set(request.toolUseID, native)
      handOver()
    })
  const decide = (request: OpenRequest, decision: Decision, native: NativeDecision) =>
    lock.withPermit(decideUnlocked(request, decision, native))

  const cancel = (toolUseID: string, message: string) =>
    lock.withPermit(
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

  return { lock, record, recordUnlocked, now, local, decide, decideUnlocked, cancel, wait, handOver }
})

export type ClaudeSessionCore = Effect.Success<ReturnType<typeof makeClaudeSessionCore>>
