// A replica reads back only the threads its clients follow (issue 32): what another replica
// commits to a thread nobody follows here is not read, decoded or published; a thread followed
// later is published from its next commit on, in order; the thread list's follow takes every thread.
import { Context, Effect, Layer, Option, PubSub } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { EventStore, type StoredEvent } from "../../src/persistence/EventStore.ts"
import { makeThreadHub } from "../../src/ws/ThreadHub.ts"
import { pgReplica, takeN } from "../support/pgReplicas.ts"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"
import { deltaEvent as delta } from "../support/deltaEvent.ts"

let postgres: TestPostgres
beforeAll(async () => {
  postgres = await startPostgres()
})
afterAll(() => postgres?.stop())

const deltas = (threadId: string, count: number) => Array.from({ length: count }, () => delta(threadId))
const idsOf = (seen: ReadonlyArray<StoredEvent>, threadId: string) =>
  seen.flatMap((s) => (s.event.threadId === threadId ? [s.event.eventId] : []))

describe("a replica publishes other replicas' events only for the threads followed there", () => {
  it("skips unfollowed threads, starts a newly followed one at its next commit, follows every thread for the list; its own appends always", async () => {
    const url = await postgres.createDatabase("followed_threads")
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const writer = yield* Layer.build(pgReplica(url))
          const reader = yield* Layer.build(pgReplica(url))
          const write = (events: ReadonlyArray<unknown>) => Context.get(writer, RuntimeIngestion).ingestAll(events)
          const store = Context.get(reader, EventStore)
          const subscription = yield* store.subscribe
          const hub = yield* makeThreadHub(store)
          const stopX = hub.listen("x", () => undefined)

          // x followed, y not: y's commits (before, between and after x's) are never published here.
          const first = [...deltas("y", 5), ...deltas("x", 5)]
          yield* write(first.slice(0, 7))
          yield* write(first.slice(7))
          yield* write(deltas("y", 3))
          const lastX = deltas("x", 1)
          yield* write(lastX)
          const seen = yield* takeN(subscription, 6)
          expect(idsOf(seen, "x")).toEqual([...first.slice(5), ...lastX].map((e) => e.eventId))
          expect(idsOf(seen, "y")).toEqual([])
          expect(seen.map((s) => s.threadSeq)).toEqual([1, 2, 3, 4, 5, 6])

          // y followed now: from its next commit on (thread_seq 9), in order; nothing of before.
          const stopY = hub.listen("y", () => undefined)
          const later = deltas("y", 4)
          yield* write(later.slice(0, 2))
          yield* write(later.slice(2))
          const ofY = yield* takeN(subscription, 4)
          expect(ofY.map((s) => [s.event.eventId, s.threadSeq])).toEqual(later.map((e, i) => [e.eventId, 9 + i]))

          // No clients: y and x skipped again; the reader's own appends to an unfollowed thread are published.
          stopY()
          stopX()
          yield* write([...deltas("x", 2), ...deltas("y", 2)])
          const own = deltas("w", 2)
          yield* Context.get(reader, RuntimeIngestion).ingestAll(own)
          const ofOwn = yield* takeN(subscription, 2)
          expect(ofOwn.map((s) => s.event.eventId)).toEqual(own.map((e) => e.eventId))

          // A thread list follower: every thread, including one never met.
          const stopList = hub.listenAll(() => undefined)
          const everywhere = [...deltas("z", 2), ...deltas("y", 1)]
          yield* write(everywhere)
          const ofList = yield* takeN(subscription, 3)
          expect(ofList.map((s) => s.event.eventId)).toEqual(everywhere.map((e) => e.eventId))
          stopList()
          yield* write(deltas("z", 2))
          const marker = deltas("w", 1)
          yield* Context.get(reader, RuntimeIngestion).ingestAll(marker)
          // z's commit came first and is no longer followed: the next thing published is the marker.
          const rest = yield* takeN(subscription, 1)
          expect(rest.map((s) => s.event.eventId)).toEqual(marker.map((e) => e.eventId))
          // …and after a while, nothing more (z's commit was not read back).
          expect(Option.isNone(yield* Effect.timeoutOption(PubSub.takeAll(subscription), "500 millis"))).toBe(true)
        })
      )
    )
  })
})
