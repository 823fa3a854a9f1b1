import {
  ThreadSnapshot,
  type RuntimeEvent,
  type ServerFrame,
  type ThreadId,
  type ThreadListEntry,
  type ThreadSummary
} from "@planbridge/contracts"
import { Effect, Schema, type Cause } from "effect"
import type { StoreError } from "../persistence/StoreError.ts"
import type { ThreadReads } from "../persistence/ThreadReads.ts"
import type { LiveRun } from "./EventFrames.ts"
import { makeSerialSteps } from "./SerialSteps.ts"
import type { ThreadHub } from "./ThreadHub.ts"

/**
 * The events after which a thread's list entry may read differently: it appeared, its state,
 * mode or liveness changed, a turn began or ended, or something began or stopped waiting on a
 * person. Deltas and items (nearly every event) change none of it and cost nothing here.
 */
const LIST_EVENTS: ReadonlySet<RuntimeEvent["type"]> = new Set<RuntimeEvent["type"]>([
  "session.started",
  "session.state.changed",
  "session.exited",
  "mode.changed",
  "turn.started",
  "turn.completed",
  "user-input.requested",
  "user-input.resolved",
  "request.opened",
  "request.resolved"
])

export interface ThreadListReads {
  readonly threads: Pick<ThreadReads["Service"], "snapshotJson" | "list">
  /** Whether a thread's session is live (the session manager's answer). */
  readonly isLive: (threadId: string) => boolean
}

export interface ThreadListFeed {
  /** Starts following the list (again: a fresh list); resolves with every thread's entry. */
  readonly subscribe: Effect.Effect<ReadonlyArray<ThreadListEntry>, StoreError>
  /** Stops following; whether it was followed. */
  readonly unsubscribe: () => boolean
  readonly close: () => void
}

const decodeSnapshot = Schema.decodeUnknownEffect(ThreadSnapshot)

/**
 * A thread's entry: its summary and what waits on a person in it, from its snapshot window of
 * one turn (which carries every prompt and request still pending, whenever it opened: bounded by
 * the thread's live state, not its history). Undefined when there is no such thread.
 */
const readEntry = (
  reads: ThreadListReads,
  threadId: ThreadId,
  summary: Pick<ThreadSummary, "updatedAt"> | ThreadSummary
): Effect.Effect<ThreadListEntry | undefined, StoreError> =>
  Effect.gen(function* () {
    const window = yield* reads.threads.snapshotJson(threadId, 1)
    if (window === undefined) return undefined
    // Our own projection's JSON: a failure to decode it is a server bug, not the client's.
    const snapshot = yield* Effect.orDie(decodeSnapshot(JSON.parse(window.json)))
    const thread: ThreadSummary =
      "threadId" in summary
        ? summary
        : {
            threadId,
            provider: snapshot.provider,
            state: snapshot.state,
            mode: snapshot.mode,
            seq: snapshot.seq,
            live: reads.isLive(threadId),
            updatedAt: summary.updatedAt
          }
    return {
      thread,
      prompts: snapshot.prompts.filter((p) => p.status === "pending"),
      requests: snapshot.requests.filter((r) => r.status === "pending" && r.promptId === null)
    }
  })

/**
 * One connection's subscription to the thread list. Its steps (the first read, each thread's
 * re-read) run one at a time and in order (SerialSteps.ts), and it listens before it reads: so
 * every change is either in the first list or sent after it as a `threadEntry` read after the
 * change. A `threadEntry` may reach the client before the command's result; it is then never
 * older than the result's entry for its thread (PROTOCOL.md, `threads.subscribe`).
 */
export const makeThreadListFeed = (deps: {
  readonly reads: ThreadListReads
  readonly hub: Pick<ThreadHub, "listenAll">
  readonly send: (frame: ServerFrame) => void
  /** A re-read failed (the store): logged; the list goes on. */
  readonly onFailure: (cause: Cause.Cause<unknown>) => void
}): ThreadListFeed => {
  const steps = makeSerialSteps()
  let stop: (() => void) | undefined

  const onRun = (run: LiveRun): void => {
    const changed = run.events.filter((e) => LIST_EVENTS.has(e.event.type))
    const last = changed.at(-1)
    if (last === undefined) return
    steps.run(
      readEntry(deps.reads, run.threadId, { updatedAt: last.event.createdAt }).pipe(
        Effect.flatMap((entry) =>
          Effect.sync(() => {
            if (entry !== undefined && stop !== undefined) deps.send({ type: "threadEntry", entry })
          })
        ),
        Effect.catchCause((cause) => Effect.sync(() => deps.onFailure(cause)))
      )
    )
  }

  const subscribe = steps.inTurn(
    Effect.gen(function* () {
      stop?.()
      stop = deps.hub.listenAll(onRun)
      const summaries = yield* deps.reads.threads.list(deps.reads.isLive)
      const entries: Array<ThreadListEntry> = []
      for (const summary of summaries) {
        // Only a live session has anything pending (recovery and an exit resolve the rest).
        if (!summary.live) entries.push({ thread: summary, prompts: [], requests: [] })
        else
          entries.push(
            (yield* readEntry(deps.reads, summary.threadId, summary)) ?? { thread: summary, prompts: [], requests: [] }
          )
      }
      return entries
    })
  )

  const unsubscribe = (): boolean => {
    if (stop === undefined) return false
    stop()
    stop = undefined
    return true
  }
  return { subscribe, unsubscribe, close: () => void unsubscribe() }
}
