// Leases, fencing and the command relay of replicas on one PostgreSQL database (issue 18), on a
// real PostgreSQL 15: what the three-replica test with the real Codex cannot provoke on purpose.
import type { RuntimeEvent } from "@planbridge/contracts"
import { Context, Effect, Exit, Layer, type Scope } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CommandRelay, type RelayReply } from "../../src/persistence/CommandRelay.ts"
import { EventStore } from "../../src/persistence/EventStore.ts"
import { postgresStore } from "../../src/persistence/postgres/PgStore.ts"
import { SessionLeases } from "../../src/persistence/SessionLeases.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"

let postgres: TestPostgres
beforeAll(async () => {
  postgres = await startPostgres()
})
afterAll(() => postgres?.stop())

const TTL_MS = 1_000
const TOKEN = "a-deployment-token-".padEnd(40, "z")

type Replica = Context.Context<EventStore | SessionLeases | CommandRelay>
const replica = (url: string, token = TOKEN): Effect.Effect<Replica, unknown, Scope.Scope> =>
  Layer.build(postgresStore({ url, replica: { token, leaseTtlMs: TTL_MS } })) as Effect.Effect<
    Replica,
    unknown,
    Scope.Scope
  >

/** A session's first event on `threadId` (any valid event will do: only its thread matters here). */
const eventsOf = (threadId: string, seed: number): Array<RuntimeEvent> =>
  generateEventMix({ seed, count: 3, threads: 1 }).map((e) => ({ ...e, threadId }) as RuntimeEvent)

const appendExit = (r: Replica, events: ReadonlyArray<RuntimeEvent>) =>
  Effect.exit(Context.get(r, EventStore).appendBatch(events))

/** The store error's reason of a refused append. */
const refusal = (r: Replica, events: ReadonlyArray<RuntimeEvent>) =>
  Effect.map(Effect.flip(Context.get(r, EventStore).appendBatch(events)), (error) => error.reason)

describe("replica leases and fencing", () => {
  it("one owner at a time; an append from a replica without the lease is refused 'fenced', also once it lost it to a take-over", async () => {
    const url = await postgres.createDatabase("leases")
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const [a, b] = [yield* replica(url), yield* replica(url)]
          const leasesA = Context.get(a, SessionLeases)
          const leasesB = Context.get(b, SessionLeases)
          expect(yield* leasesA.claim("t1")).toBe(true)
          expect(Exit.isSuccess(yield* appendExit(a, eventsOf("t1", 1)))).toBe(true)
          // B cannot take a live lease, and cannot write for a thread A owns.
          expect(yield* leasesB.claim("t1")).toBe(false)
          expect(yield* leasesB.ownerElsewhere("t1")).toBe(leasesA.replicaId)
          expect(yield* refusal(b, eventsOf("t1", 2))).toBe("fenced")
          // A stops renewing (paused, or cut off from the database) past the lease time.
          const client = new pg.Client({ connectionString: url })
          yield* Effect.promise(() => client.connect())
          yield* Effect.promise(() =>
            client.query(
              "update session_leases set expires_at = now() - interval '1 millisecond' where thread_id = 't1'"
            )
          )
          expect(yield* leasesB.expired).toEqual(["t1"])
          expect(yield* leasesB.claim("t1")).toBe(true)
          const { rows } = yield* Effect.promise(() =>
            client.query<{ owner: string; fence: string }>("select owner, fence from session_leases")
          )
          expect(rows).toEqual([{ owner: leasesB.replicaId, fence: "2" }])
          // A comes back: its appends are fenced, and its renewal tells it which leases it lost.
          expect(yield* refusal(a, eventsOf("t1", 3))).toBe("fenced")
          expect(yield* leasesA.renew).toEqual(["t1"])
          expect(Exit.isSuccess(yield* appendExit(b, eventsOf("t1", 4)))).toBe(true)
          // Released: nobody holds it, anyone may write (recovery, replay) and claim it again.
          yield* leasesB.release("t1")
          expect(yield* leasesA.ownerElsewhere("t1")).toBeUndefined()
          expect(yield* leasesA.claim("t1")).toBe(true)
          // The log holds exactly the three accepted batches of the thread, gap-free.
          const log = yield* Context.get(a, EventStore).readThread("t1" as never, 0, 100)
          expect(log.map((e) => e.threadSeq)).toEqual([1, 2, 3, 4, 5, 6])
          yield* Effect.promise(() => client.end())
        })
      )
    )
  })
})

describe("the command relay", () => {
  it("a command reaches its owner once, comes back with the owner's reply, and is sealed in the database", async () => {
    const url = await postgres.createDatabase("relay")
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    const seenInTable: Array<string> = []
    const received: Array<unknown> = []
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const [a, b] = [yield* replica(url), yield* replica(url)]
          yield* Context.get(b, CommandRelay).serve((command) =>
            Effect.promise(async () => {
              received.push(command)
              const { rows } = await client.query<{ sealed: string; state: string }>(
                "select sealed, state from relayed_commands"
              )
              seenInTable.push(...rows.map((r) => `${r.state}:${r.sealed}`))
              return { ok: true, value: { echoed: command } } satisfies RelayReply
            })
          )
          const owner = Context.get(b, SessionLeases).replicaId
          const command = { type: "userInput.respond", answer: "the secret is hunter2" }
          const reply = yield* Context.get(a, CommandRelay).forward(owner, "t1", command)
          expect(reply).toEqual({ ok: true, value: { echoed: command } })
          expect(received).toEqual([command])
          // While it ran, the row was taken, and held the command only sealed.
          expect(seenInTable).toHaveLength(1)
          expect(seenInTable[0]!.startsWith("taken:")).toBe(true)
          expect(seenInTable[0]).not.toContain("hunter2")
          // The requester deleted the row as it read the reply.
          expect((yield* Effect.promise(() => client.query("select * from relayed_commands"))).rows).toEqual([])
        })
      )
    )
    await client.end()
  })

  it("an owner that never takes the command: withdrawn after the lease time, typed 'unreachable', never run", async () => {
    const url = await postgres.createDatabase("relay_unreachable")
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const a = yield* replica(url)
          const started = Date.now()
          const error = yield* Effect.flip(Context.get(a, CommandRelay).forward("a-dead-replica", "t1", { type: "x" }))
          expect(error).toMatchObject({ _tag: "RelayError", reason: "unreachable" })
          expect(Date.now() - started).toBeGreaterThanOrEqual(TTL_MS)
          expect(Date.now() - started).toBeLessThan(TTL_MS + 2_000)
        })
      )
    )
    expect((await client.query("select * from relayed_commands")).rows).toEqual([])
    await client.end()
  })

  it("replicas with different tokens: the owner cannot open the command, and the requester is told so", async () => {
    const url = await postgres.createDatabase("relay_tokens")
    let ran = false
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const [a, b] = [yield* replica(url), yield* replica(url, "another-token-".padEnd(40, "q"))]
          yield* Context.get(b, CommandRelay).serve(() =>
            Effect.sync((): RelayReply => ((ran = true), { ok: true, value: 1 }))
          )
          const error = yield* Effect.flip(
            Context.get(a, CommandRelay).forward(Context.get(b, SessionLeases).replicaId, "t1", { type: "x" })
          )
          expect(error).toMatchObject({ _tag: "RelayError", reason: "token_mismatch" })
        })
      )
    )
    expect(ran).toBe(false)
  })
})
