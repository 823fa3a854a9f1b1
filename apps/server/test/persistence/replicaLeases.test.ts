// Leases, fencing and the command relay of replicas on one PostgreSQL database (issue 18), on a
// real PostgreSQL 15: what the three-replica test with the real Codex cannot provoke on purpose.
import type { RuntimeEvent } from "@planbridge/contracts"
import { Context, Effect, Exit, Layer, type Scope } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CommandRelay, type RelayReply } from "../../src/persistence/CommandRelay.ts"
import { EventStore } from "../../src/persistence/EventStore.ts"
import { APPEND_LOCK } from "../../src/persistence/postgres/PgEventLog.ts"
import { postgresStore } from "../../src/persistence/postgres/PgStore.ts"
import { fencesOf, SessionLeases, type LeaseFences } from "../../src/persistence/SessionLeases.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"

let postgres: TestPostgres
beforeAll(async () => {
  postgres = await startPostgres()
})
afterAll(() => postgres?.stop())

const TTL_MS = 1_000
/** How long the trigger of the lock test holds an insert. */
const SLOW_INSERT_MS = 2_000
const TOKEN = "a-deployment-token-".padEnd(40, "z")

type Replica = Context.Context<EventStore | SessionLeases | CommandRelay>
const replica = (url: string, token = TOKEN): Effect.Effect<Replica, unknown, Scope.Scope> =>
  Layer.build(postgresStore({ url, replica: { token, leaseTtlMs: TTL_MS } })) as Effect.Effect<
    Replica,
    unknown,
    Scope.Scope
  >

/** A client of the test's own; its loss (the cluster stopped after a failure) is no uncaught error. */
const ownClient = (url: string): pg.Client => {
  const client = new pg.Client({ connectionString: url })
  client.on("error", () => undefined)
  return client
}

/** A session's first event on `threadId` (any valid event will do: only its thread matters here). */
const eventsOf = (threadId: string, seed: number): Array<RuntimeEvent> =>
  generateEventMix({ seed, count: 3, threads: 1 }).map((e) => ({ ...e, threadId }) as RuntimeEvent)

const appendExit = (r: Replica, events: ReadonlyArray<RuntimeEvent>, fences?: LeaseFences) =>
  Effect.exit(Context.get(r, EventStore).appendBatch(events, undefined, undefined, fences))

/** The store error's reason of a refused append. */
const refusal = (r: Replica, events: ReadonlyArray<RuntimeEvent>, fences?: LeaseFences) =>
  Effect.map(
    Effect.flip(Context.get(r, EventStore).appendBatch(events, undefined, undefined, fences)),
    (error) => error.reason._tag
  )

describe("replica leases and fencing", () => {
  it("one owner at a time; an append that proves a lost lease is refused 'fenced', whatever became of the lease since", async () => {
    const url = await postgres.createDatabase("leases")
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const [a, b] = [yield* replica(url), yield* replica(url)]
          const leasesA = Context.get(a, SessionLeases)
          const leasesB = Context.get(b, SessionLeases)
          const leaseA = yield* leasesA.claim("t1")
          expect(leaseA).toEqual({ threadId: "t1", fence: 1 })
          expect(Exit.isSuccess(yield* appendExit(a, eventsOf("t1", 1), fencesOf(leaseA)))).toBe(true)
          // B cannot take a live lease, and cannot write for a thread A owns.
          expect(yield* leasesB.claim("t1")).toBeUndefined()
          expect(yield* leasesB.ownerElsewhere("t1")).toBe(leasesA.replicaId)
          expect(yield* refusal(b, eventsOf("t1", 2))).toBe("StoreFenced")
          // A stops renewing (paused, or cut off from the database) past the lease time.
          const client = ownClient(url)
          yield* Effect.promise(() => client.connect())
          yield* Effect.promise(() =>
            client.query(
              "update session_leases set expires_at = clock_timestamp() - interval '1 millisecond' where thread_id = 't1'"
            )
          )
          // Expired and not yet taken: A's append is refused already (the database's clock).
          expect(yield* refusal(a, eventsOf("t1", 3), fencesOf(leaseA))).toBe("StoreFenced")
          expect(yield* leasesB.expired).toEqual(["t1"])
          const leaseB = yield* leasesB.claim("t1")
          expect(leaseB).toEqual({ threadId: "t1", fence: 2 })
          const { rows } = yield* Effect.promise(() =>
            client.query<{ owner: string; fence: string }>("select owner, fence from session_leases")
          )
          expect(rows).toEqual([{ owner: leasesB.replicaId, fence: "2" }])
          // A comes back: its appends are fenced, and its renewal tells it which lease it lost.
          expect(yield* refusal(a, eventsOf("t1", 3), fencesOf(leaseA))).toBe("StoreFenced")
          expect(yield* leasesA.renew).toEqual([leaseA])
          expect(Exit.isSuccess(yield* appendExit(b, eventsOf("t1", 4), fencesOf(leaseB)))).toBe(true)
          // Released: nobody holds it, anyone may write (recovery, replay) and claim it again...
          yield* leasesB.release(leaseB!)
          expect(yield* leasesA.ownerElsewhere("t1")).toBeUndefined()
          expect(Exit.isSuccess(yield* appendExit(a, eventsOf("t1", 5)))).toBe(true)
          // ...but what proves A's lost lease stays refused: after the release, and after A itself
          // claimed the thread again (a new fence: fences only grow, also across a release).
          expect(yield* refusal(a, eventsOf("t1", 6), fencesOf(leaseA))).toBe("StoreFenced")
          const leaseAgain = yield* leasesA.claim("t1")
          expect(leaseAgain).toEqual({ threadId: "t1", fence: 3 })
          expect(yield* refusal(a, eventsOf("t1", 6), fencesOf(leaseA))).toBe("StoreFenced")
          expect(Exit.isSuccess(yield* appendExit(a, eventsOf("t1", 7), fencesOf(leaseAgain)))).toBe(true)
          // The log holds exactly the four accepted batches of the thread, gap-free.
          const log = yield* Context.get(a, EventStore).readThread("t1" as never, 0, 100)
          expect(log.map((e) => e.threadSeq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
          yield* Effect.promise(() => client.end())
        })
      )
    )
  })

  it("an append checked under a live lease holds it to its commit: a take-over meanwhile waits and follows it", async () => {
    const url = await postgres.createDatabase("leases_locked")
    const client = ownClient(url)
    await client.connect()
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const [a, b] = [yield* replica(url), yield* replica(url)]
          // The insert of A's batch takes 2 s (a trigger sleeps): its check passes while its lease
          // lives, the lease expires before it commits, and B tries to take the thread over then.
          yield* Effect.promise(() =>
            client.query(`create function slow_insert() returns trigger language plpgsql as
                $$ begin perform pg_sleep(${SLOW_INSERT_MS / 1000}); return null; end $$;
              create trigger slow_insert before insert on events for each statement execute function slow_insert()`)
          )
          const leaseA = yield* Context.get(a, SessionLeases).claim("t1")
          const appendStartedAt = Date.now()
          const append = Effect.runPromise(appendExit(a, eventsOf("t1", 1), fencesOf(leaseA)))
          yield* Effect.sleep(`${TTL_MS + 300} millis`)
          const leaseB = yield* Context.get(b, SessionLeases).claim("t1")
          const claimedAt = Date.now()
          expect(Exit.isSuccess(yield* Effect.promise(() => append))).toBe(true)
          // The claim, made 1.3 s into A's append, could not pass the row that append had locked
          // until it committed, after its 2 s insert (without the lock it returns at once).
          expect(claimedAt - appendStartedAt).toBeGreaterThanOrEqual(SLOW_INSERT_MS - 100)
          expect(leaseB).toEqual({ threadId: "t1", fence: 2 })
          yield* Effect.promise(() => client.query("drop trigger slow_insert on events"))
          // From then on A is fenced, B writes after A's batch.
          expect(yield* refusal(a, eventsOf("t1", 2), fencesOf(leaseA))).toBe("StoreFenced")
          expect(Exit.isSuccess(yield* appendExit(b, eventsOf("t1", 3), fencesOf(leaseB)))).toBe(true)
          const log = yield* Context.get(a, EventStore).readThread("t1" as never, 0, 100)
          expect(log.map((e) => e.threadSeq)).toEqual([1, 2, 3, 4, 5, 6])
        })
      )
    )
    await client.end()
  })

  it("an append that began before its lease expired, and is checked after, is refused (the database's clock, not the transaction's start)", async () => {
    const url = await postgres.createDatabase("leases_clock")
    const holder = ownClient(url)
    await holder.connect()
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const a = yield* replica(url)
          const leaseA = yield* Context.get(a, SessionLeases).claim("t1")
          // Another writer holds the append lock: A's transaction begins, then waits past its lease.
          yield* Effect.promise(() => holder.query(`begin; select pg_advisory_xact_lock(${APPEND_LOCK})`))
          const append = Effect.runPromise(
            Effect.flip(
              Context.get(a, EventStore).appendBatch(eventsOf("t1", 1), undefined, undefined, fencesOf(leaseA))
            )
          )
          yield* Effect.sleep(`${TTL_MS + 300} millis`)
          yield* Effect.promise(() => holder.query("commit"))
          const error = yield* Effect.promise(() => append)
          expect(error.reason._tag).toBe("StoreFenced")
          expect(error.message).toContain("it expired")
          const log = yield* Context.get(a, EventStore).readThread("t1" as never, 0, 100)
          expect(log).toEqual([])
        })
      )
    )
    await holder.end()
  })
})

describe("the command relay", () => {
  it("a command reaches its owner once, comes back with the owner's reply, and is sealed in the database", async () => {
    const url = await postgres.createDatabase("relay")
    const client = ownClient(url)
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
    const client = ownClient(url)
    await client.connect()
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const a = yield* replica(url)
          const started = Date.now()
          const error = yield* Effect.flip(Context.get(a, CommandRelay).forward("a-dead-replica", "t1", { type: "x" }))
          expect(error).toMatchObject({
            _tag: "StoreError",
            reason: { _tag: "RelayUnreachable", threadId: "t1", boundMs: TTL_MS }
          })
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
          expect(error).toMatchObject({ _tag: "StoreError", reason: { _tag: "RelayTokenMismatch" } })
        })
      )
    )
    expect(ran).toBe(false)
  })
})
