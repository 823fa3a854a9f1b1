import type { RuntimeEvent, ThreadId, UserInputPrompt } from "@planbridge/contracts"
import { Context, type Effect, type PubSub, type Scope } from "effect"
import type { EventJson } from "./EventJson.ts"
import type { ThreadFollows } from "./FollowedThreads.ts"
import type { LeaseFences } from "./SessionLeases.ts"
import type { StoreError } from "./StoreError.ts"

/** A committed event with its place in the global log and in its thread. */
export interface StoredEvent {
  readonly seq: number
  readonly threadSeq: number
  readonly event: RuntimeEvent
  /** The event as the log stored it, when the append that published it has it: live frames splice it. */
  readonly json?: EventJson
}

/** A committed event as the JSON text of its `event` (see `readThreadJson`). */
export interface StoredEventJson {
  readonly threadSeq: number
  readonly eventJson: string
}

export interface AppendResult {
  readonly seq: number
  readonly threadSeq: number
  /** The event id was already in the log: nothing was written. */
  readonly duplicate: boolean
  /** What was stored (after `beforeAppend`), for publishing; absent for duplicates. */
  readonly stored?: StoredEvent
}

/** What `beforeAppend` may look up, as of the events appended before it in the same transaction. */
export interface AppendLookup {
  readonly prompt: (promptId: string) => UserInputPrompt | undefined
}

/** A last chance to transform an event inside the appending transaction (secret redaction). */
export type BeforeAppend = (event: RuntimeEvent, lookup: AppendLookup) => RuntimeEvent

/**
 * The event log: the one narrow interface a storage engine implements (SQLite in
 * SqliteEventStore.ts). Everything above it (ingestion, the WebSocket feed, recovery) sees only
 * this, so another engine is one more Layer of this service. Its contract:
 * - `appendBatch` appends a batch atomically, in order (all of it or none of it); its projections
 *   are written in the same transaction (PostgreSQL) or lag the log by a bounded tail that every
 *   reader of a projection brings up to the log first (SQLite, ProjectionLag.ts); an event id already in the log is a duplicate, reported with the
 *   sequences it was first given, and writes nothing. `threadSeq` is gap-free per thread.
 *   `json`, when given, is each event as the log stores it (`json[i]` for `events[i]`, made
 *   by `eventJsonOf`), written as it is unless `beforeAppend` changed the event. `fences`: the
 *   session leases its writer holds (replicas, SessionLeases.ts): with one that no longer holds
 *   for a thread of the batch, nothing is written (`fenced`); one server has no leases.
 * - every committed event reaches `subscribe`rs once its transaction has committed, in commit
 *   order, with the sequences the log gave it; never an uncommitted one.
 * - reads see every committed event: a thread after a per-thread cursor, the whole log after a
 *   global one, and a thread's head (its last `threadSeq`, 0 when it has none).
 */
export class EventStore extends Context.Service<
  EventStore,
  {
    readonly appendBatch: (
      events: ReadonlyArray<RuntimeEvent>,
      beforeAppend?: BeforeAppend,
      json?: ReadonlyArray<EventJson>,
      fences?: LeaseFences
    ) => Effect.Effect<ReadonlyArray<AppendResult>, StoreError>
    /** Committed events of one thread after a per-thread cursor, in thread order, at most `limit`. */
    readonly readThread: (
      threadId: ThreadId,
      afterThreadSeq: number,
      limit: number
    ) => Effect.Effect<ReadonlyArray<StoredEvent>, StoreError>
    /**
     * The same as JSON text, each `eventJson` equal (as JSON) to the `event` `readThread` gives:
     * a client's backlog is sent without parsing and serializing every event.
     */
    readonly readThreadJson: (
      threadId: ThreadId,
      afterThreadSeq: number,
      limit: number
    ) => Effect.Effect<ReadonlyArray<StoredEventJson>, StoreError>
    /** The whole log after a global cursor, in global order, at most `limit` (rebuilds, exports). */
    readonly readAll: (afterSeq: number, limit: number) => Effect.Effect<ReadonlyArray<StoredEvent>, StoreError>
    /** The per-thread sequence of a thread's newest committed event; 0 when the thread has none. */
    readonly threadHead: (threadId: ThreadId) => Effect.Effect<number, StoreError>
    /** Committed events, live, from the moment of subscription. */
    readonly subscribe: Effect.Effect<PubSub.Subscription<StoredEvent>, never, Scope.Scope>
    /**
     * Engines where other processes append too (PostgreSQL replicas): from this call on,
     * `subscribe`rs get this process's own appends and, of what other writers commit, only the
     * threads followed through the result (FollowedThreads.ts). Absent where every append is this
     * process's own (SQLite).
     */
    readonly followOnly?: () => ThreadFollows
    /**
     * How many `appendBatch`es of different threads the engine lets be in flight at once (each
     * waiting for its own commit); absent: one at a time (SQLite commits synchronously, so a
     * second append would overlap nothing). Ingestion pipelines its batches up to it.
     */
    readonly appendsInFlight?: number
  }
>()("planbridge/EventStore") {}
