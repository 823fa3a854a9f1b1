// Another replica's commits reach this one without a read back when they fit one NOTIFY (issue
// 32): the announcement carries the rows; a transaction too large for one payload is announced
// by ranges and read back, as before. Either way each thread is published in order, exactly as
// stored, and no NOTIFY ever exceeds PostgreSQL's payload bound (an append would fail).
import type { ThreadId } from "@planbridge/contracts"
import { Context, Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { EventStore } from "../../src/persistence/EventStore.ts"
import { CARRIED_EVENT_BYTES } from "../../src/persistence/postgres/PgAppendScript.ts"
import { PgDatabase } from "../../src/persistence/postgres/PgDatabase.ts"
import { makePgEventLog, PgEventLog, type ThreadRange } from "../../src/persistence/postgres/PgEventLog.ts"
import { pgEventStore } from "../../src/persistence/postgres/PgEventStore.ts"
import { pgReplica, takeN } from "../support/pgReplicas.ts"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"
import { deltaEvent } from "../support/deltaEvent.ts"

let postgres: TestPostgres
beforeAll(async () => {
  postgres = await startPostgres()
})
afterAll(() => postgres?.stop())

/** A reader replica's event store whose read-backs of announced ranges are recorded. */
const readerCountingReads = (url: string, reads: Array<ReadonlyArray<ThreadRange>>) =>
  pgEventStore.pipe(
    Layer.provide(
      Layer.effect(
        PgEventLog,
        Effect.gen(function* () {
          const log = makePgEventLog(yield* PgDatabase, "reader")
          return {
            ...log,
            readRanges: (ranges: ReadonlyArray<ThreadRange>) => {
              reads.push(ranges)
              return log.readRanges(ranges)
            }
          }
        })
      )
    ),
    Layer.provide(PgDatabase.layer({ url }))
  )

const delta = (threadId: string, text: string) => deltaEvent(threadId, text, { raw: true })

describe("announcements that carry their rows", () => {
  it("small commits are published from the NOTIFY, large ones read back; in order, as stored, never over the payload bound", async () => {
    const url = await postgres.createDatabase("carried_announcements")
    const reads: Array<ReadonlyArray<ThreadRange>> = []
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const writer = yield* Layer.build(pgReplica(url))
          const reader = Context.get(yield* Layer.build(readerCountingReads(url, reads)), EventStore)
          const subscription = yield* reader.subscribe
          const write = (events: ReadonlyArray<unknown>) => Context.get(writer, RuntimeIngestion).ingestAll(events)

          // Small commits of two threads, texts that JSON escapes (quotes, backslashes, control
          // characters, non-ASCII): published from the announcements alone.
          const small = [
            [delta("x", 'a "quoted" \\ text\n\u0001'), delta("y", "€ and 🙂")],
            [delta("x", "two")],
            [delta("y", "three"), delta("x", "four")]
          ]
          for (const batch of small) yield* write(batch)
          const seen = yield* takeN(subscription, 5)
          expect(reads).toEqual([])
          const stored = [
            ...(yield* reader.readThread("x" as ThreadId, 0, 100)),
            ...(yield* reader.readThread("y" as ThreadId, 0, 100))
          ]
          for (const threadId of ["x", "y"]) {
            const published = seen.filter((s) => s.event.threadId === threadId)
            expect(published.map((s) => s.threadSeq)).toEqual(published.map((_, i) => i + 1))
            expect(published).toEqual(stored.filter((s) => s.event.threadId === threadId))
          }

          // Escape-heavy events around the carrying bound, one commit each: each is carried or
          // read back, none fails on the NOTIFY's 8,000-byte bound.
          // A unit of the text is 36 bytes of a carried row: 12 in the event's JSON, 18 once that
          // JSON is a string of the announcement's, twice (the event and its raw payload).
          const heavy = Array.from({ length: 12 }, (_, i) =>
            delta("z", '"\\\n\u0002'.repeat(Math.floor((CARRIED_EVENT_BYTES / 36) * (0.5 + i * 0.07))))
          )
          for (const event of heavy) yield* write([event])
          const ofHeavy = yield* takeN(subscription, heavy.length)
          expect(ofHeavy.map((s) => [s.event.eventId, s.threadSeq])).toEqual(heavy.map((e, i) => [e.eventId, i + 1]))
          expect(reads.length).toBeGreaterThan(0)
          expect(reads.length).toBeLessThan(heavy.length)

          // One commit far over the bound: announced by ranges, read back once, in order.
          reads.length = 0
          const large = Array.from({ length: 40 }, (_, i) => delta(i % 2 === 0 ? "x" : "y", "l".repeat(300)))
          yield* write(large)
          const ofLarge = yield* takeN(subscription, large.length)
          expect(ofLarge.map((s) => s.event.eventId).sort()).toEqual(large.map((e) => e.eventId).sort())
          for (const threadId of ["x", "y"])
            expect(ofLarge.filter((s) => s.event.threadId === threadId).map((s) => s.threadSeq)).toEqual(
              Array.from({ length: 20 }, (_, i) => (threadId === "x" ? 4 : 3) + i)
            )
          expect(reads).toHaveLength(1)
        })
      )
    )
  })
})
