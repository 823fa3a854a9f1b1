// What only the PostgreSQL store has to show: several writers (replicas) on one database, and a
// secret that never reaches PostgreSQL's files.
import { Context, Effect, Layer } from "effect"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { EventStore, type StoredEvent } from "../../src/persistence/EventStore.ts"
import { OperatorQueries } from "../../src/persistence/OperatorQueries.ts"
import { ProjectionRebuild } from "../../src/persistence/ProjectionRebuild.ts"
import { ResumeTargets } from "../../src/persistence/ResumeTargets.ts"
import { ThreadReads } from "../../src/persistence/ThreadReads.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { pgReplica, takeN } from "../support/pgReplicas.ts"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"

let postgres: TestPostgres
beforeAll(async () => {
  postgres = await startPostgres()
})
afterAll(() => postgres?.stop())

describe("the PostgreSQL store with several writers on one database", () => {
  it("three replicas appending the same threads at once: thread_seq gap-free, every replica publishes every event once, each thread in its order", async () => {
    const url = await postgres.createDatabase("replicas")
    const events = generateEventMix({ seed: 61, count: 1500, threads: 4 })
    // Each event goes to one of three writers; a thread's events are spread over all of them.
    const share = (n: number) => events.filter((_, i) => i % 3 === n)
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const contexts = [
            yield* Layer.build(pgReplica(url)),
            yield* Layer.build(pgReplica(url)),
            yield* Layer.build(pgReplica(url))
          ]
          const subscriptions = yield* Effect.forEach(contexts, (c) => Context.get(c, EventStore).subscribe)
          yield* Effect.forEach(
            contexts,
            (c, n) => Effect.forEach(share(n), (e) => Context.get(c, RuntimeIngestion).ingest(e), { concurrency: 8 }),
            { concurrency: "unbounded" }
          )
          const received = yield* Effect.forEach(subscriptions, (s) => takeN(s, events.length))
          const log = yield* Context.get(contexts[0]!, EventStore).readAll(0, 10_000)
          expect(log).toHaveLength(events.length)
          // Within a thread seq rises with thread_seq (a thread's appends are ordered by its lock);
          // across threads it is no commit order (issue 32: no lock is shared between threads).
          const heads = new Map<string, number>()
          for (const stored of log) {
            expect(stored.threadSeq).toBe((heads.get(stored.event.threadId) ?? 0) + 1)
            heads.set(stored.event.threadId, stored.threadSeq)
          }
          // Each replica published exactly the log, each thread in its order, whoever wrote each event.
          const threadOf = (stored: ReadonlyArray<StoredEvent>, threadId: string) =>
            stored.flatMap((s) => (s.event.threadId === threadId ? [[s.seq, s.event.eventId]] : []))
          for (const seen of received) {
            expect(seen).toHaveLength(log.length)
            for (const threadId of heads.keys()) expect(threadOf(seen, threadId)).toEqual(threadOf(log, threadId))
          }
        })
      )
    )
  })

  it("a replica that starts later publishes only what is committed after it started, in order", async () => {
    const url = await postgres.createDatabase("late_replica")
    const [early, late] = [
      generateEventMix({ seed: 62, count: 200, prefix: "early" }),
      generateEventMix({ seed: 63, count: 200, prefix: "late" })
    ]
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const writer = yield* Layer.build(pgReplica(url))
          yield* Context.get(writer, RuntimeIngestion).ingestAll(early)
          const reader = yield* Layer.build(pgReplica(url))
          const subscription = yield* Context.get(reader, EventStore).subscribe
          for (let i = 0; i < late.length; i += 20)
            yield* Context.get(writer, RuntimeIngestion).ingestAll(late.slice(i, i + 20))
          const seen = yield* takeN(subscription, late.length)
          expect(seen.map((s) => s.event.eventId)).toEqual(late.map((e) => e.eventId))
        })
      )
    )
  })

  it("an event whose text holds a NUL (\\u0000) is stored, read back, and does not break the reads that look inside events; its projection holds U+FFFD", async () => {
    const url = await postgres.createDatabase("nul_text")
    const base = { provider: "codex", threadId: "thr-nul", createdAt: "2026-11-30T10:00:00.000Z" }
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const ingestion = yield* RuntimeIngestion
          yield* ingestion.ingestAll([
            {
              ...base,
              eventId: "n1",
              type: "session.started",
              payload: { cwd: "/w", resumed: false, nativeThreadId: "nat-1" }
            },
            {
              ...base,
              eventId: "n2",
              turnId: "t1",
              itemId: "i1",
              type: "content.delta",
              payload: { streamKind: "assistant_text", delta: "a\u0000b" }
            }
          ])
          const stored = yield* (yield* EventStore).readThread("thr-nul" as never, 0, 10)
          expect(stored.map((s) => s.event.type)).toEqual(["session.started", "content.delta"])
          const delta = stored[1]!.event
          expect(delta.type === "content.delta" ? delta.payload.delta : undefined).toBe("a\u0000b")
          const target = yield* (yield* ResumeTargets).target("thr-nul")
          expect(target?.nativeId).toBe("nat-1")
          // PostgreSQL's text has no NUL: the projection holds U+FFFD where the log holds U+0000.
          yield* ingestion.ingest({
            ...base,
            eventId: "n3",
            type: "user-input.requested",
            payload: {
              prompt: {
                promptId: "p-nul",
                source: "native",
                blocking: true,
                questions: [
                  {
                    id: "q",
                    label: "Q",
                    secret: false,
                    options: [],
                    multiSelect: false,
                    allowFreeform: true,
                    required: true
                  }
                ]
              }
            }
          })
          const detail = yield* (yield* OperatorQueries).getPrompt("p-nul")
          expect(detail.timeline.map((t) => t.event.eventId)).toEqual(["n3"])
          const snapshot = yield* (yield* ThreadReads).snapshot("thr-nul" as never)
          expect(snapshot?.items.map((i) => i.text)).toEqual(["a\uFFFDb"])
        })
      ).pipe(Effect.provide(pgReplica(url)))
    )
  })

  it("a batch that fails inside its transaction leaves nothing behind, is a typed storage error, and the next one goes in", async () => {
    const url = await postgres.createDatabase("failing_batch")
    const [first, second, third] = [0, 1, 2].map((n) =>
      generateEventMix({ seed: 70 + n, count: 60, threads: 2, prefix: `fail${n}` })
    )
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    try {
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const ingestion = yield* RuntimeIngestion
            // Every pooled connection has prepared the projection statements by now.
            for (let i = 0; i < 4; i++) yield* ingestion.ingestAll(first!.slice(i * 15, i * 15 + 15))
            // The projection's table is gone for a moment: the batch's script fails after its INSERT.
            yield* Effect.promise(() => admin.query("alter table items rename to items_away"))
            const failed = yield* Effect.flip(ingestion.ingestAll(second!))
            expect(failed.reason._tag).toBe("StoreRefused")
            expect(failed.message).toMatch(/items/)
            yield* Effect.promise(() => admin.query("alter table items_away rename to items"))
            const counted = yield* Effect.promise(() =>
              admin.query<{ n: number }>("select count(*)::int as n from events")
            )
            expect(counted.rows[0]!.n).toBe(60)
            const receipts = yield* ingestion.ingestAll(third!)
            expect(receipts.every((r) => !r.duplicate)).toBe(true)
            const report = yield* (yield* ProjectionRebuild).rebuild({ dryRun: true })
            expect(report).toEqual({ events: 120, differences: [] })
          })
        ).pipe(Effect.provide(pgReplica(url)))
      )
    } finally {
      await admin.end()
    }
  })

  it("a secret answer never reaches PostgreSQL: not in its rows, not in its files after a checkpoint", async () => {
    const url = await postgres.createDatabase("secrets")
    const secret = "hunter2-" + "y".repeat(8) + "-PGSECRET"
    const base = {
      provider: "codex",
      threadId: "thr-pg-secret",
      turnId: "turn-1",
      createdAt: "2026-11-30T10:00:00.000Z"
    }
    const question = { options: [], multiSelect: false, allowFreeform: true, required: true }
    const requested = (promptId: string, eventId: string) => ({
      ...base,
      eventId,
      type: "user-input.requested",
      payload: {
        prompt: {
          promptId,
          source: "native",
          blocking: true,
          questions: [
            { id: "token", label: "API token", secret: true, ...question },
            { id: "name", label: "Name", secret: false, ...question }
          ]
        }
      }
    })
    const resolved = (promptId: string, eventId: string) => ({
      ...base,
      eventId,
      type: "user-input.resolved",
      payload: {
        promptId,
        resolution: "answered",
        answers: [
          { questionId: "token", text: secret },
          { questionId: "name", text: "visible-name" }
        ]
      }
    })
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const ingestion = yield* RuntimeIngestion
          // Asked and answered in one batch (the prompt is looked up as of the batch), and across two.
          yield* ingestion.ingestAll([requested("p-same", "e1"), resolved("p-same", "e2")])
          yield* ingestion.ingestAll([requested("p-later", "e3")])
          yield* ingestion.ingestAll([resolved("p-later", "e4")])
          const queries = yield* OperatorQueries
          for (const promptId of ["p-same", "p-later"]) {
            const detail = yield* queries.getPrompt(promptId)
            expect(detail.answers).toEqual([
              { questionId: "token", redacted: true },
              { questionId: "name", text: "visible-name" }
            ])
            expect(detail.timeline.map((t) => t.event.type)).toEqual(["user-input.requested", "user-input.resolved"])
          }
        })
      ).pipe(Effect.provide(pgReplica(url)))
    )
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    const rows = await client.query<{ text: string }>(
      "select coalesce(string_agg(event || coalesce(raw, ''), ''), '') || (select coalesce(string_agg(coalesce(answers, ''), ''), '') from prompts) as text from events"
    )
    await client.end()
    expect(rows.rows[0]!.text).toContain("visible-name")
    expect(rows.rows[0]!.text).not.toContain(secret)
    await postgres.admin("checkpoint")
    const files: Array<string> = []
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name)
        if (statSync(path).isDirectory()) walk(path)
        else files.push(path)
      }
    }
    walk(postgres.dataDir)
    const bytes = files.map((f) => readFileSync(f).toString("latin1")).join("")
    expect(bytes).toContain("visible-name")
    expect(bytes).not.toContain(secret)
  })
})
