import { decodeRuntimeEventSync, type RuntimeEvent } from "@planbridge/contracts"
import { Clock, Context, Deferred, Effect, Layer, PubSub, Queue, Scheduler, Semaphore, type Scope } from "effect"
import type { EventJson } from "../persistence/EventJson.ts"
import { EventStore, type AppendResult, type BeforeAppend, type StoredEvent } from "../persistence/EventStore.ts"
import type { LeaseFences } from "../persistence/SessionLeases.ts"
import { isDecodedEvent } from "../provider/kernel/EventDraft.ts"
import type { StoreError } from "../persistence/StoreError.ts"
import "./CompiledEventDecoding.ts"
import { IngestionError, InvalidEvent, StoreOutage, StoreRefused } from "./IngestionError.ts"
import { boundEventJson } from "./EventSize.ts"
import { redactResolvedSecrets } from "./SecretRedaction.ts"

export type { StoredEvent } from "../persistence/EventStore.ts"

export interface IngestReceipt {
  readonly seq: number
  readonly threadSeq: number
  readonly duplicate: boolean
}

export { IngestionError } from "./IngestionError.ts"

/**
 * How long ingestion holds events while the store is unavailable (PostgreSQL: its connections
 * lost, the database restarting) before it gives them up. Held, the events keep their order and
 * their callers wait (a session's `emit`, so its provider's pipe fills: inbound.ts), and every
 * later event waits behind them; they are committed as soon as the store is back. The bound is
 * counted from the first failed attempt of an outage: past it, what is held and whatever comes
 * until the store answers again fails at once (`unavailable`), and the sessions whose events
 * were given up are ended (`abandoned`), never thinned. Events held at once are bounded by the
 * callers waiting (a session has one burst in flight: at most its read-ahead, 256 lines).
 */
export const STORE_OUTAGE_BOUND_MS = 30_000
/** The first retry after a failed attempt, doubled up to the second (ms). */
const RETRY_FIRST_MS = 25
const RETRY_MAX_MS = 1_000

export interface RuntimeIngestionOptions {
  /** Default `STORE_OUTAGE_BOUND_MS`. */
  readonly outageBoundMs?: number
}

type Outcome = ReadonlyArray<AppendResult> | IngestionError

interface Job {
  readonly events: ReadonlyArray<RuntimeEvent>
  /** `json[i]` is `events[i]` as the log stores it, serialized once for the size check and the log. */
  readonly json: ReadonlyArray<EventJson>
  readonly done: Deferred.Deferred<ReadonlyArray<AppendResult>, IngestionError>
  /** The session leases its writer holds (replicas): the store refuses the job if one is lost. */
  readonly fences: LeaseFences | undefined
}

/** The fences of jobs committed together; undefined when two disagree on a thread (each goes alone). */
const fencesTogether = (batch: ReadonlyArray<Job>): { readonly fences: LeaseFences | undefined } | undefined => {
  let merged: Map<string, number> | undefined
  for (const job of batch) {
    if (job.fences === undefined) continue
    merged ??= new Map()
    for (const [threadId, fence] of job.fences) {
      if ((merged.get(threadId) ?? fence) !== fence) return undefined
      merged.set(threadId, fence)
    }
  }
  return { fences: merged }
}

/** Wakes the writer in a microtask, not after the event loop's next `setImmediate` phase. */
const MICROTASK_SCHEDULER = new Scheduler.MixedScheduler("sync")

/**
 * The writer of a store that lets appends be in flight together (`EventStore.appendsInFlight`,
 * PostgreSQL): while one batch waits for its commit, the writer takes the next jobs and commits
 * them too, up to `inFlight` batches at once, instead of letting every job wait for the commit
 * before it (on PostgreSQL most of an append is its COMMIT's round trip). A batch each of whose
 * threads has no batch in flight goes at once; one that shares a thread with a batch in flight
 * waits for that batch's end (its commit, its retries through an outage, its jobs tried alone
 * after a failure), and the writer with it, so a thread's jobs are committed, published and
 * settled in the order they were offered, and a later job never overtakes an earlier one that
 * failed and is tried again. Each batch is `commit`ted exactly as by the one-at-a-time writer.
 */
const pipelinedWriteLoop = (
  jobs: Queue.Queue<Job>,
  inFlight: number,
  commit: (batch: ReadonlyArray<Job>) => Effect.Effect<void>
) =>
  Effect.gen(function* () {
    const slots = yield* Semaphore.make(inFlight)
    /** Per thread, the end of the last batch taken with it, while that batch is in flight. */
    const threadsInFlight = new Map<string, Deferred.Deferred<void>>()
    /** Batches committing now. */
    let committing = 0
    return Effect.gen(function* () {
      yield* Semaphore.take(slots, 1)
      // With a batch committing, the jobs offered in this turn of the event loop (sessions woken
      // together, callers settled together) are let in first, to go as one batch: taken one by
      // one as each is offered, they would make as many transactions, each with its fixed cost.
      if (committing > 0) yield* Effect.yieldNow
      const taken = yield* Queue.takeBetween(jobs, 1, MAX_JOBS_PER_TRANSACTION)
      const threads = new Set(taken.flatMap((job) => job.events.map((event) => event.threadId)))
      const earlier = new Set<Deferred.Deferred<void>>()
      for (const threadId of threads) {
        const end = threadsInFlight.get(threadId)
        if (end !== undefined) earlier.add(end)
      }
      for (const end of earlier) yield* Deferred.await(end)
      const end = Deferred.makeUnsafe<void>()
      for (const threadId of threads) threadsInFlight.set(threadId, end)
      committing++
      const finish = Effect.sync(() => {
        committing--
        for (const threadId of threads) if (threadsInFlight.get(threadId) === end) threadsInFlight.delete(threadId)
        Deferred.doneUnsafe(end, Effect.void)
      }).pipe(
        Effect.andThen(Semaphore.release(slots, 1)),
        // The writer waiting for a slot or this batch's threads wakes in a microtask (see `jobs`).
        Effect.provideService(Scheduler.Scheduler, MICROTASK_SCHEDULER)
      )
      yield* Effect.forkChild(commit(taken).pipe(Effect.ensuring(finish)), { startImmediately: true })
    }).pipe(Effect.forever({ disableYield: true }))
  })

/** Jobs taken per transaction: large enough to amortize the commit, small enough to keep latency low. */
const MAX_JOBS_PER_TRANSACTION = 256

/**
 * Takes canonical events from adapters, validates them, brings each under the size bound, and
 * has the event store append and project them in one transaction, which publishes them (with
 * their sequence numbers) only after the commit. One writer fiber drains a queue, so concurrent
 * adapters are group-committed together instead of paying one commit each; a caller's effect
 * completes only once its events are durable.
 */
export class RuntimeIngestion extends Context.Service<
  RuntimeIngestion,
  {
    /**
     * Validates and persists one event; completes after commit. Re-ingesting a known id is a
     * no-op. `fences`: the session leases the writer holds (replicas; see EventStore.appendBatch).
     */
    readonly ingest: (input: unknown, fences?: LeaseFences) => Effect.Effect<IngestReceipt, IngestionError>
    /** The same for many events, committed together (all or none). */
    readonly ingestAll: (
      inputs: ReadonlyArray<unknown>,
      fences?: LeaseFences
    ) => Effect.Effect<ReadonlyArray<IngestReceipt>, IngestionError>
    /** Committed events, live, from the moment of subscription (the event store's). */
    readonly subscribe: Effect.Effect<PubSub.Subscription<StoredEvent>, never, Scope.Scope>
    /**
     * The threads whose events were given up after the outage bound (`unavailable`), one notice
     * per thread and outage: their sessions must end (SessionManager.ts).
     */
    readonly abandoned: Effect.Effect<PubSub.Subscription<string>, never, Scope.Scope>
  }
>()("planbridge/RuntimeIngestion") {
  // Not `Effect.fn`: its span would be the parent of everything the writer fiber forked here runs.
  static readonly makeWith = (options: RuntimeIngestionOptions = {}) =>
    Effect.gen(function* () {
      const outageBoundMs = options.outageBoundMs ?? STORE_OUTAGE_BOUND_MS
      const store = yield* EventStore
      const abandoned = yield* PubSub.unbounded<string>()
      // A queue wakes its taker through the dispatcher of the fiber that made it; the default one
      // waits for `setImmediate`, i.e. for every expired timer and pending I/O callback of the loop
      // iteration (profiled: 36 events per commit at the bench's light load, p50 event → client
      // 4–9 ms). A microtask dispatcher wakes the writer as soon as the offering code yields: the
      // jobs offered in the same synchronous run are still committed together (group commit).
      const jobs = yield* Queue.unbounded<Job>().pipe(Effect.provideService(Scheduler.Scheduler, MICROTASK_SCHEDULER))

      const storageError = (error: StoreError) => new IngestionError({ reason: new StoreRefused({ cause: error }) })
      /** A lost store: the same append may succeed once it is back (never a refusal such as `fenced`). */
      const isLost = (error: StoreError) => error.reason._tag === "StoreUnavailable"

      /**
       * One attempt at the jobs: in one transaction; if it fails, each alone, so that one failing
       * job sinks no other. `lost`: the store is unavailable, and the jobs after the `outcomes`
       * (in order) have none yet: they are to be tried again.
       */
      const attempt = (
        batch: ReadonlyArray<Job>
      ): Effect.Effect<{ readonly outcomes: ReadonlyArray<Outcome>; readonly lost: StoreError | undefined }> => {
        const alone = Effect.gen(function* () {
          const outcomes: Array<Outcome> = []
          for (const job of batch) {
            const result = yield* store.appendBatch(job.events, redactResolvedSecrets_, job.json, job.fences).pipe(
              Effect.map((results) => ({ results })),
              Effect.catch((error) => Effect.succeed({ error }))
            )
            if ("results" in result) outcomes.push(result.results)
            else if (isLost(result.error)) return { outcomes, lost: result.error }
            else outcomes.push(storageError(result.error))
          }
          return { outcomes, lost: undefined }
        })
        if (batch.length === 1) return alone
        const together = fencesTogether(batch)
        if (together === undefined) return alone
        return store
          .appendBatch(
            batch.flatMap((job) => job.events),
            redactResolvedSecrets_,
            batch.flatMap((job) => job.json),
            together.fences
          )
          .pipe(
            Effect.map((results) => {
              let offset = 0
              const outcomes = batch.map((job) => {
                const slice = results.slice(offset, offset + job.events.length)
                offset += job.events.length
                return slice
              })
              return { outcomes, lost: undefined }
            }),
            Effect.catch((error) => (isLost(error) ? Effect.succeed({ outcomes: [], lost: error }) : alone))
          )
      }

      const settle = (job: Job, outcome: Outcome) =>
        outcome instanceof IngestionError ? Deferred.fail(job.done, outcome) : Deferred.succeed(job.done, outcome)

      /** When the current outage began (its first failed attempt); undefined while the store answers. */
      let outageSince: number | undefined
      /**
       * Commits the jobs in order, holding those the store could not take while it is unavailable
       * and trying them again with backoff, up to the outage bound (see `STORE_OUTAGE_BOUND_MS`).
       * An append that may have committed before its connection broke is safe to try again: its
       * event ids are then in the log, and they are duplicates (the store publishes them).
       */
      const commit = (batch: ReadonlyArray<Job>) =>
        Effect.gen(function* () {
          let pending = batch
          let delay = RETRY_FIRST_MS
          for (;;) {
            const { outcomes, lost } = yield* attempt(pending)
            // The store has published the committed events by now: callers hear back after subscribers.
            for (const [i, outcome] of outcomes.entries()) yield* settle(pending[i]!, outcome)
            if (lost === undefined) {
              outageSince = undefined
              return
            }
            pending = pending.slice(outcomes.length)
            const now = yield* Clock.currentTimeMillis
            outageSince ??= now
            const left = outageSince + outageBoundMs - now
            if (left <= 0) return yield* giveUp(pending, lost, now - outageSince)
            yield* Effect.sleep(Math.min(delay, left))
            delay = Math.min(delay * 2, RETRY_MAX_MS)
          }
        })

      /** Past the bound: the held jobs fail, and their threads' sessions are told to end. */
      const giveUp = (held: ReadonlyArray<Job>, lost: StoreError, forMs: number) =>
        Effect.gen(function* () {
          const error = new IngestionError({
            reason: new StoreOutage({ forMs, boundMs: outageBoundMs, cause: lost })
          })
          const threads = new Set<string>()
          for (const job of held) {
            for (const event of job.events) threads.add(event.threadId)
            yield* Deferred.fail(job.done, error)
          }
          yield* PubSub.publishAll(abandoned, threads)
        })

      const writeLoop = Effect.gen(function* () {
        const taken = yield* Queue.takeBetween(jobs, 1, MAX_JOBS_PER_TRANSACTION)
        yield* commit(taken)
        // No yield between rounds: `Effect.forever` would otherwise park the writer until
        // `setImmediate` after each commit, and the next jobs would wait for it. The writer still
        // yields on the fiber's operation budget, and takeBetween suspends it when idle.
      }).pipe(Effect.forever({ disableYield: true }))
      const appendsInFlight = store.appendsInFlight ?? 1
      yield* Effect.forkScoped(
        appendsInFlight > 1 ? yield* pipelinedWriteLoop(jobs, appendsInFlight, commit) : writeLoop
      )

      /**
       * Synchronous decoding of the whole batch (one effect per batch, not one per event), each
       * event brought under the size bound: `pieces[i]` is how many events input i became. The
       * size is measured on the JSON the log stores, so an event that fits is serialized once.
       * An event a session stamped is decoded already (`isDecodedEvent`): it is not decoded again.
       */
      const decodeAll = (inputs: ReadonlyArray<unknown>) =>
        Effect.suspend(() => {
          const decoded: Array<RuntimeEvent> = []
          const json: Array<EventJson> = []
          const pieces: Array<number> = []
          for (let index = 0; index < inputs.length; index++) {
            try {
              const input = inputs[index]
              const bounded = boundEventJson(isDecodedEvent(input) ? input : decodeRuntimeEventSync(input))
              for (const piece of bounded) {
                decoded.push(piece.event)
                json.push(piece.json)
              }
              pieces.push(bounded.length)
            } catch (cause) {
              const reason = new InvalidEvent(inputs.length > 1 ? { index, cause } : { cause })
              return Effect.fail(new IngestionError({ reason }))
            }
          }
          return Effect.succeed({ events: decoded, json, pieces })
        })

      /** One receipt per input: that of its last piece. */
      const submit = (
        {
          events,
          json,
          pieces
        }: {
          readonly events: ReadonlyArray<RuntimeEvent>
          readonly json: ReadonlyArray<EventJson>
          readonly pieces: ReadonlyArray<number>
        },
        fences: LeaseFences | undefined
      ) =>
        Effect.gen(function* () {
          if (events.length === 0) return []
          const done = yield* Deferred.make<ReadonlyArray<AppendResult>, IngestionError>()
          yield* Queue.offer(jobs, { events, json, done, fences })
          const results = yield* Deferred.await(done)
          const receipts: Array<IngestReceipt> = []
          let end = 0
          for (const count of pieces) {
            end += count
            const { seq, threadSeq, duplicate } = results[end - 1]!
            receipts.push({ seq, threadSeq, duplicate })
          }
          return receipts
        })

      return RuntimeIngestion.of({
        ingest: (input, fences) =>
          decodeAll([input]).pipe(
            Effect.flatMap((decoded) => submit(decoded, fences)),
            Effect.map((receipts) => receipts[0]!)
          ),
        ingestAll: (inputs, fences) => decodeAll(inputs).pipe(Effect.flatMap((decoded) => submit(decoded, fences))),
        subscribe: store.subscribe,
        abandoned: PubSub.subscribe(abandoned)
      })
    })
  static readonly make = RuntimeIngestion.makeWith()

  static readonly layer = Layer.effect(RuntimeIngestion, RuntimeIngestion.make)
  static readonly layerWith = (options: RuntimeIngestionOptions) =>
    Layer.effect(RuntimeIngestion, RuntimeIngestion.makeWith(options))
}

// Without answers there is nothing to redact (and nothing to scrub from `raw`): skip the prompt lookup.
const redactResolvedSecrets_: BeforeAppend = (event, lookup) =>
  event.type === "user-input.resolved" && event.payload.answers.length > 0
    ? redactResolvedSecrets(event, lookup.prompt(event.payload.promptId))
    : event
