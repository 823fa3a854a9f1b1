import { Effect, Layer, PubSub, Semaphore } from "effect"
import { EventStore, type StoredEvent } from "../EventStore.ts"
import { makeFollowedThreads } from "../FollowedThreads.ts"
import { storeFailure } from "../StoreError.ts"
import { parsePersistedEvent } from "../PersistedEvent.ts"
import { followOtherWriters, type CarriedRow } from "./PgCommitListener.ts"
import { isConnectionLoss } from "./PgConnectionLoss.ts"
import { PgEventLog, type ThreadRange } from "./PgEventLog.ts"
import { makeThreadTurns } from "./PgThreadTurns.ts"

/**
 * The carried rows of the wanted threads when they are, for each, every row after what was
 * published up to the range's end (in `seq` order, as announced); else undefined, and the ranges
 * are read back. They are not whole when a commit between them was this process's own (not
 * announced to itself) and not yet published: publishing the rows around it would mark it
 * published, and its own append's publish would then skip it.
 */
export const carriedRuns = (
  carried: ReadonlyArray<CarriedRow>,
  wanted: ReadonlyMap<string, readonly [after: number, last: number]>
): ReadonlyArray<CarriedRow> | undefined => {
  const next = new Map<string, number>()
  const rows: Array<CarriedRow> = []
  for (const row of carried) {
    const range = wanted.get(row.threadId)
    if (range === undefined || row.threadSeq <= range[0] || row.threadSeq > range[1]) continue
    if (row.threadSeq !== (next.get(row.threadId) ?? range[0] + 1)) return undefined
    next.set(row.threadId, row.threadSeq + 1)
    rows.push(row)
  }
  for (const [threadId, [, last]] of wanted) if (next.get(threadId) !== last + 1) return undefined
  return rows
}

/**
 * Threads whose last published `thread_seq` this process remembers (least recently published
 * forgotten first). A thread past the bound is published again from the next range announced.
 */
export const PUBLISHED_THREADS_BOUND = 100_000

/**
 * The most appends this process has in flight at once (ingestion pipelines its batches up to it:
 * RuntimeIngestion.ts): one committing and the next one sent. Each holds a pooled connection
 * until its commit is answered (PgDatabase.ts, 8 by default). More is not better here: measured
 * in one process (50 paced sessions, loopback), 2 matched 1 at p50 (4.8–5.1 ms against
 * 4.4–5.2) while 4 made a third more transactions and a p99 of ~40 ms against ~11 (their commits
 * queue behind each other at NOTIFY's commit lock, and each costs its fixed share of CPU).
 */
export const APPENDS_IN_FLIGHT = 2

/**
 * `EventStore` on PostgreSQL. Several processes (replicas) may append to one database, each
 * thread under its own lock (PgEventLog.ts): commits of one thread are ordered, commits of
 * different threads are not, and nothing orders them globally. So each process publishes every
 * thread in its own order — the order clients resume by (`thread_seq`) — whoever wrote it: its
 * own appends at once after their commit, the other writers' from their NOTIFYs
 * (PgCommitListener.ts), which announce each thread's `thread_seq` range and carry the rows when
 * they fit one payload, else are read back by thread. One map, the last `thread_seq` published per thread, serves both and drops what was
 * published already; a run that does not follow it (another writer committed between two of this
 * process's appends, a take-over) is preceded by the rows in between, read from the log. A thread
 * this process has not met yet (or forgot, `PUBLISHED_THREADS_BOUND`) is published from the first
 * row announced or appended; after a lost LISTEN connection, from the first row committed since
 * the connection's last confirmed snapshot (PgCommitListener.ts). What came before is in the log,
 * where a client's feed reads it (ws/ThreadFeed.ts).
 *
 * Once the process says which threads it follows (`followOnly`: its thread hub does), other
 * writers' announcements of threads nobody here follows are not read back at all, and the thread
 * is forgotten (so a later follow starts from the next announcement, as for a thread not met yet,
 * and a later own append publishes no run read from the log): a replica reads and decodes the
 * events its clients watch, not the whole cluster's. A thread followed after an announcement was
 * skipped loses nothing: that commit came before the follow, and the follower's first read of the
 * log (after it registered) holds it.
 */
export const pgEventStore = Layer.effect(
  EventStore,
  Effect.gen(function* () {
    const log = yield* PgEventLog
    const committed = yield* PubSub.unbounded<StoredEvent>()
    /** One publisher at a time, so that each thread's runs go out in order. */
    const publishing = yield* Semaphore.make(1)
    /**
     * Appends in turn per thread (PgThreadTurns.ts): different threads' appends are in flight at
     * once, each on its own pooled connection, so none waits for another's round trips or locks; a
     * thread's appends commit and publish in the order they were called. The projector's folds
     * stay one at a time without a lock: each runs synchronously from its load to the script it
     * sends (PgEventLog.ts).
     */
    const inTurn = makeThreadTurns()
    /** The threads whose other writers' events are read back (all, until `followOnly`). */
    const followed = makeFollowedThreads()
    /** The last `thread_seq` published, by thread, least recently published first. */
    const published = new Map<string, number>()
    const markPublished = (threadId: string, threadSeq: number) => {
      published.delete(threadId)
      published.set(threadId, threadSeq)
      if (published.size > PUBLISHED_THREADS_BOUND) published.delete(published.keys().next().value!)
    }

    /**
     * Publishes committed events (any threads; each thread's in `thread_seq` order), skipping what
     * was published already and first reading what a thread's run skipped. Run under `publishing`.
     */
    const publish = (events: ReadonlyArray<StoredEvent>) =>
      Effect.gen(function* () {
        const gaps: Array<ThreadRange> = []
        const heads = new Map<string, number>()
        for (const stored of events) {
          const threadId = stored.event.threadId
          const last = heads.get(threadId) ?? published.get(threadId)
          if (last !== undefined && stored.threadSeq > last + 1 && !heads.has(threadId))
            gaps.push([threadId, last, stored.threadSeq - 1])
          if (last === undefined || stored.threadSeq > last) heads.set(threadId, stored.threadSeq)
        }
        // A gap that cannot be read now is left to the client's feed, which reads it from the log.
        const filled =
          gaps.length === 0
            ? []
            : yield* Effect.tryPromise(() => log.readRanges(gaps)).pipe(Effect.orElseSucceed(() => []))
        const fresh: Array<StoredEvent> = []
        for (const stored of [...filled, ...events]) {
          const threadId = stored.event.threadId
          const last = published.get(threadId)
          if (last !== undefined && stored.threadSeq <= last) continue
          fresh.push(stored)
          markPublished(threadId, stored.threadSeq)
        }
        if (fresh.length > 0) yield* PubSub.publishAll(committed, fresh)
      })

    /**
     * Publishes committed ranges: each thread's rows after what was published, up to the range's
     * end (`carried`: the rows the announcements carried, all of the ranges'; else read back). `othersOnly`: what other writers announced, skipped for threads nobody here follows; a
     * range of this process's own appends (a retried batch whose commit went unheard) is always
     * published, as its own appends are.
     */
    const catchUp = (ranges: ReadonlyArray<ThreadRange>, othersOnly = true, carried?: ReadonlyArray<CarriedRow>) =>
      publishing.withPermits(1)(
        Effect.gen(function* () {
          const wanted = new Map<string, readonly [after: number, last: number]>()
          for (const [threadId, first, last] of ranges) {
            if (othersOnly && !followed.publishes(threadId)) {
              published.delete(threadId)
              continue
            }
            const after = published.get(threadId) ?? first - 1
            if (after < last) wanted.set(threadId, [after, last])
          }
          if (wanted.size === 0) return
          const wholeRuns = carried === undefined ? undefined : carriedRuns(carried, wanted)
          const rows =
            wholeRuns === undefined
              ? yield* Effect.tryPromise({
                  try: () => log.readRanges([...wanted].map(([threadId, [after, last]]) => [threadId, after, last])),
                  catch: storeFailure("read", "read other replicas' events")
                })
              : yield* Effect.try({
                  try: () =>
                    wholeRuns.map((row): StoredEvent => ({
                      seq: row.seq,
                      threadSeq: row.threadSeq,
                      event: parsePersistedEvent(row)
                    })),
                  catch: storeFailure("read", "decode other replicas' events")
                })
          yield* publish(rows)
        })
      )
    /** After the LISTEN connection was lost: what every thread committed since `snapshot` (PgCommitListener.ts). */
    const catchUpSince = (snapshot: string) =>
      Effect.tryPromise({
        try: () => log.changedSince(snapshot),
        catch: storeFailure("read", "read what other replicas committed while this one was not listening")
      }).pipe(
        Effect.flatMap((changed) =>
          catchUp(changed.map(([threadId, after, head]): ThreadRange => [threadId, after + 1, head]))
        )
      )
    yield* followOtherWriters((ranges, rows) => catchUp(ranges, true, rows), catchUpSince)

    const appendBatch: EventStore["Service"]["appendBatch"] = (events, beforeAppend, json, fences) =>
      inTurn(
        events.map((event) => event.threadId),
        Effect.tryPromise({
          try: () => log.appendBatch(events, beforeAppend, json, fences),
          // A lost database is `unavailable` (ingestion holds the events and tries again); a
          // fenced append or any other refusal is final.
          catch: (cause) => storeFailure(isConnectionLoss(cause) ? "unavailable" : "write", "append events")(cause)
        }).pipe(
          Effect.tap((results) => {
            const stored: Array<StoredEvent> = []
            // Events already in the log: an earlier try of this batch may have committed them
            // without hearing so (a lost connection); its own NOTIFY is not heard here.
            const repeated = new Map<string, [number, number]>()
            for (const [i, result] of results.entries()) {
              if (result.stored !== undefined) stored.push(result.stored)
              // Only where this process has published the thread: an id known for long is no news.
              else if (published.has(events[i]!.threadId)) {
                const threadId = events[i]!.threadId
                const range = repeated.get(threadId)
                repeated.set(threadId, [
                  Math.min(range?.[0] ?? result.threadSeq, result.threadSeq),
                  Math.max(range?.[1] ?? result.threadSeq, result.threadSeq)
                ])
              }
            }
            return Effect.andThen(
              repeated.size === 0
                ? Effect.void
                : catchUp(
                    [...repeated].map(([threadId, [first, last]]): ThreadRange => [threadId, first, last]),
                    false
                  ).pipe(Effect.ignore),
              publishing.withPermits(1)(publish(stored))
            )
          })
        )
      )

    return EventStore.of({
      appendBatch,
      readThread: (threadId, afterThreadSeq, limit) =>
        Effect.tryPromise({
          try: () => log.readThread(threadId, afterThreadSeq, limit),
          catch: storeFailure("read", `read thread ${threadId}`)
        }),
      readThreadJson: (threadId, afterThreadSeq, limit) =>
        Effect.tryPromise({
          try: () => log.readThreadJson(threadId, afterThreadSeq, limit),
          catch: storeFailure("read", `read thread ${threadId}`)
        }),
      readAll: (afterSeq, limit) =>
        Effect.tryPromise({
          try: () => log.readAll(afterSeq, limit),
          catch: storeFailure("read", "read the event log")
        }),
      threadHead: (threadId) =>
        Effect.tryPromise({
          try: () => log.threadHead(threadId),
          catch: storeFailure("read", `read thread ${threadId}`)
        }),
      subscribe: PubSub.subscribe(committed),
      appendsInFlight: APPENDS_IN_FLIGHT,
      followOnly: () => {
        followed.optIn()
        return { follow: followed.follow, followEvery: followed.followEvery }
      }
    })
  })
)
