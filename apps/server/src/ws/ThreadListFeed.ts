import {
  ThreadSnapshot,
  type RuntimeEvent,
  type ServerFrame,
  type ThreadId,
  type ThreadListEntry,
  type ThreadSummary
} from "@planbridge/contracts"
import { Effect, Schema, type Scope } from "effect"
import type { StoreError } from "../persistence/StoreError.ts"
import type { ThreadReads } from "../persistence/ThreadReads.ts"
import type { LiveRun } from "./EventFrames.ts"
import { makeFeedFiber, type FeedFiber } from "./FeedFiber.ts"
import type { ThreadHub } from "./ThreadHub.ts"

/**
 * The events after which a thread's list entry may read differently: it appeared, its state,
 * mode or liveness changed, a turn began or ended, or something began or stopped waiting on a
 * person; and a user message's item (`namesThread`: the title). Deltas and other items (nearly
 * every event) change none of it and cost nothing here.
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

/** A user message's item: the first one is the thread's title (only once it has text). */
const namesThread = (event: RuntimeEvent): boolean =>
  (event.type === "item.started" || event.type === "item.completed") &&
  event.payload.itemType === "user_message" &&
  event.payload.text !== undefined

export interface ThreadListReads {
  readonly threads: Pick<ThreadReads["Service"], "snapshotJson" | "list" | "summary" | "setArchived">
  /** Whether a thread's session is live (the session manager's answer). */
  readonly isLive: (threadId: string) => boolean
}

export interface ThreadListFeed {
  /** Starts following the list (again: a fresh list); resolves with every thread's entry. */
  readonly subscribe: Effect.Effect<ReadonlyArray<ThreadListEntry>, StoreError>
  /**
   * `thread.archive`: files the thread away (or back) and tells every list follower of this
   * server; undefined when there is no such thread.
   */
  readonly archive: (
    threadId: ThreadId,
    archived: boolean
  ) => Effect.Effect<{ readonly archivedAt: string | null } | undefined, StoreError>
  /** Stops following; whether it was followed. */
  readonly unsubscribe: () => boolean
}

export interface ThreadListFeedDeps {
  readonly reads: ThreadListReads
  readonly hub: Pick<ThreadHub["Service"], "listenAll" | "listenListChanges" | "listChanged">
  readonly send: (frame: ServerFrame) => void
  /**
   * A re-read failed (the store; logged): the connection ends, since a list that stopped
   * following would silently go stale.
   */
  readonly end: () => void
}

const decodeSnapshot = Schema.decodeUnknownEffect(ThreadSnapshot)

/**
 * A thread's entry: its summary and what waits on a person in it, from its snapshot window of
 * one turn (which carries every prompt and request still pending, whenever it opened: bounded by
 * the thread's live state, not its history). Only a live session has anything pending (recovery
 * and an exit resolve the rest). Undefined when there is no such thread.
 */
const readEntry = (
  reads: ThreadListReads,
  threadId: ThreadId,
  known?: ThreadSummary
): Effect.Effect<ThreadListEntry | undefined, StoreError> =>
  Effect.gen(function* () {
    const thread = known ?? (yield* reads.threads.summary(threadId, reads.isLive))
    if (thread === undefined) return undefined
    if (!thread.live) return { thread, prompts: [], requests: [] }
    const window = yield* reads.threads.snapshotJson(threadId, 1)
    if (window === undefined) return { thread, prompts: [], requests: [] }
    // Our own projection's JSON: a failure to decode it is a server bug, not the client's.
    const snapshot = yield* Effect.orDie(decodeSnapshot(JSON.parse(window.json)))
    return {
      thread,
      prompts: snapshot.prompts.filter((p) => p.status === "pending"),
      requests: snapshot.requests.filter((r) => r.status === "pending" && r.promptId === null)
    }
  })

/**
 * One connection's subscription to the thread list. Its steps (the first read, each thread's
 * re-read) run one at a time and in order (FeedFiber.ts), and it listens before it reads: so
 * every change is either in the first list or sent after it as a `threadEntry` read after the
 * change. A `threadEntry` may reach the client before the command's result; it is then never
 * older than the result's entry for its thread (PROTOCOL.md, `threads.subscribe`). It follows
 * the list until the scope it is made in (the connection's) closes.
 */
export const makeThreadListFeed = (deps: ThreadListFeedDeps): Effect.Effect<ThreadListFeed, never, Scope.Scope> =>
  Effect.gen(function* () {
    const steps = yield* makeFeedFiber({ doing: "reading a thread's list entry", end: deps.end })
    const feed = makeListFeed(deps, steps)
    // Added after the fiber's own: so it runs first, and no change reaches a feed being stopped.
    yield* Effect.addFinalizer(() => Effect.sync(() => void feed.unsubscribe()))
    return feed
  })

const makeListFeed = (deps: ThreadListFeedDeps, steps: FeedFiber): ThreadListFeed => {
  let stop: (() => void) | undefined

  /** Sends the thread's entry as it is now (read in turn, after every step before it). */
  const sendEntry = (threadId: ThreadId): void =>
    steps.run(
      Effect.flatMap(readEntry(deps.reads, threadId), (entry) =>
        Effect.sync(() => {
          if (entry !== undefined && stop !== undefined) deps.send({ type: "threadEntry", entry })
        })
      )
    )

  const onRun = (run: LiveRun): void => {
    if (run.events.some(({ event }) => LIST_EVENTS.has(event.type) || namesThread(event))) sendEntry(run.threadId)
  }

  const subscribe = steps.inTurn(
    Effect.gen(function* () {
      stop?.()
      const stopRuns = deps.hub.listenAll(onRun)
      const stopChanges = deps.hub.listenListChanges((threadId) => sendEntry(threadId as ThreadId))
      stop = () => {
        stopRuns()
        stopChanges()
      }
      const summaries = yield* deps.reads.threads.list(deps.reads.isLive)
      const entries: Array<ThreadListEntry> = []
      for (const summary of summaries)
        entries.push(
          (yield* readEntry(deps.reads, summary.threadId, summary)) ?? { thread: summary, prompts: [], requests: [] }
        )
      return entries
    })
  )

  const unsubscribe = (): boolean => {
    if (stop === undefined) return false
    stop()
    stop = undefined
    return true
  }
  const archive = (threadId: ThreadId, archived: boolean) =>
    deps.reads.threads.setArchived(threadId, archived ? new Date().toISOString() : undefined).pipe(
      Effect.tap((done) =>
        Effect.sync(() => {
          if (done !== undefined) deps.hub.listChanged(threadId)
        })
      )
    )

  return { subscribe, archive, unsubscribe }
}
