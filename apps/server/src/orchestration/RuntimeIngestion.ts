import { decodeRuntimeEventSync, type RuntimeEvent } from "@planbridge/contracts"
import { Context, Deferred, Effect, Layer, Queue, Scheduler, Schema, type PubSub, type Scope } from "effect"
import { eventJsonOf, type EventJson } from "../persistence/EventJson.ts"
import { EventStore, type AppendResult, type BeforeAppend, type StoredEvent } from "../persistence/EventStore.ts"
import type { LeaseFences } from "../persistence/SessionLeases.ts"
import type { StoreError } from "../persistence/StoreError.ts"
import "./CompiledEventDecoding.ts"
import { boundEventSize, eventJsonFits } from "./EventSize.ts"
import { redactResolvedSecrets } from "./SecretRedaction.ts"

export type { StoredEvent } from "../persistence/EventStore.ts"

export interface IngestReceipt {
  readonly seq: number
  readonly threadSeq: number
  readonly duplicate: boolean
}

/** `invalid`: the event does not decode (the message names the path); `storage`: the store failed. */
export class IngestionError extends Schema.TaggedError<IngestionError>()("IngestionError", {
  reason: Schema.Literals(["invalid", "storage"]),
  message: Schema.String
}) {}

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
  }
>()("planbridge/RuntimeIngestion") {
  static readonly make = Effect.gen(function* () {
    const store = yield* EventStore
    // A queue wakes its taker through the dispatcher of the fiber that made it; the default one
    // waits for `setImmediate`, i.e. for every expired timer and pending I/O callback of the loop
    // iteration (profiled: 36 events per commit at the bench's light load, p50 event → client
    // 4–9 ms). A microtask dispatcher wakes the writer as soon as the offering code yields: the
    // jobs offered in the same synchronous run are still committed together (group commit).
    const jobs = yield* Queue.unbounded<Job>().pipe(Effect.provideService(Scheduler.Scheduler, MICROTASK_SCHEDULER))

    const storageError = (error: StoreError) =>
      new IngestionError({ reason: "storage", message: `cannot persist events: ${error.message}` })
    const appendAlone = (job: Job) =>
      store
        .appendBatch(job.events, redactResolvedSecrets_, job.json, job.fences)
        .pipe(Effect.catch((e) => Effect.succeed(storageError(e))))

    /** The jobs in one transaction; if it fails, each alone, so that one failing job sinks no other. */
    const commit = (batch: ReadonlyArray<Job>): Effect.Effect<ReadonlyArray<Outcome>> => {
      if (batch.length === 1) return Effect.map(appendAlone(batch[0]!), (outcome) => [outcome])
      const together = fencesTogether(batch)
      if (together === undefined) return Effect.forEach(batch, appendAlone)
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
            return batch.map((job) => {
              const slice = results.slice(offset, offset + job.events.length)
              offset += job.events.length
              return slice
            })
          }),
          Effect.catch(() => Effect.forEach(batch, appendAlone))
        )
    }

    const writeLoop = Effect.gen(function* () {
      const taken = yield* Queue.takeBetween(jobs, 1, MAX_JOBS_PER_TRANSACTION)
      // The store has published the committed events by now: callers hear back after subscribers.
      const outcomes = yield* commit(taken)
      for (const [i, job] of taken.entries()) {
        const outcome = outcomes[i]
        if (outcome === undefined) continue
        if (outcome instanceof IngestionError) yield* Deferred.fail(job.done, outcome)
        else yield* Deferred.succeed(job.done, outcome)
      }
      // No yield between rounds: `Effect.forever` would otherwise park the writer until
      // `setImmediate` after each commit, and the next jobs would wait for it. The writer still
      // yields on the fiber's operation budget, and takeBetween suspends it when idle.
    }).pipe(Effect.forever({ disableYield: true }))
    yield* Effect.forkScoped(writeLoop)

    /**
     * Synchronous decoding of the whole batch (one effect per batch, not one per event), each
     * event brought under the size bound: `pieces[i]` is how many events input i became. The
     * size is measured on the JSON the log stores, so an event that fits is serialized once.
     */
    const decodeAll = (inputs: ReadonlyArray<unknown>) =>
      Effect.suspend(() => {
        const decoded: Array<RuntimeEvent> = []
        const json: Array<EventJson> = []
        const pieces: Array<number> = []
        for (let index = 0; index < inputs.length; index++) {
          try {
            const event = decodeRuntimeEventSync(inputs[index])
            const whole = eventJsonOf(event)
            if (eventJsonFits(whole)) {
              decoded.push(event)
              json.push(whole)
              pieces.push(1)
              continue
            }
            const bounded = boundEventSize(event)
            for (const piece of bounded) {
              decoded.push(piece)
              json.push(eventJsonOf(piece))
            }
            pieces.push(bounded.length)
          } catch (error) {
            const message = error instanceof Error ? error.message : String(error)
            return Effect.fail(
              new IngestionError({
                reason: "invalid",
                message: inputs.length > 1 ? `event #${index}: ${message}` : message
              })
            )
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
      subscribe: store.subscribe
    })
  })

  static readonly layer = Layer.effect(RuntimeIngestion, RuntimeIngestion.make)
}

// Without answers there is nothing to redact (and nothing to scrub from `raw`): skip the prompt lookup.
const redactResolvedSecrets_: BeforeAppend = (event, lookup) =>
  event.type === "user-input.resolved" && event.payload.answers.length > 0
    ? redactResolvedSecrets(event, lookup.prompt(event.payload.promptId))
    : event
