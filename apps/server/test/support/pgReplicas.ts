import { Effect, Layer, PubSub } from "effect"
import pg from "pg"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import type { StoredEvent } from "../../src/persistence/EventStore.ts"
import { postgresStore } from "../../src/persistence/postgres/PgStore.ts"

/** One writer process as the server wires it: its own pool, LISTEN connection and origin. */
export const pgReplica = (url: string) => RuntimeIngestion.layer.pipe(Layer.provideMerge(postgresStore({ url })))

/** The thread whose inserts `holdSlowThread` holds. */
export const SLOW_THREAD = "slow-thread"

/** A connection of the test's own to the database at `url`, closed with the scope. */
export const adminConnection = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const admin = new pg.Client({ connectionString: url })
      admin.on("error", () => undefined)
      await admin.connect()
      return admin
    }),
    (admin) => Effect.promise(() => admin.end())
  )

/**
 * Holds every insert of the events whose thread id is `LIKE threads` for `ms` (a trigger sleeping
 * in the insert), so that their append transactions stay open with their locks taken and their
 * `seq` drawn: what the tests of concurrent appends hold appends with while others go on.
 * Installed for the database at `url` through an admin connection, which it gives.
 */
export const holdInserts = (url: string, ms: number, threads: string) =>
  Effect.tap(adminConnection(url), (admin) =>
    Effect.promise(() =>
      admin.query(`create function held_insert() returns trigger language plpgsql as
          $$ begin perform pg_sleep(${ms / 1000}); return new; end $$;
        create trigger held_insert before insert on events for each row
          when (new.thread_id like '${threads}') execute function held_insert()`)
    )
  )

/** Holds every insert of `SLOW_THREAD`'s events for `ms` (`holdInserts`). */
export const holdSlowThread = (url: string, ms: number) => holdInserts(url, ms, SLOW_THREAD)

/** Takes from a store's subscription until `count` events arrived, or fails after `ms`. */
export const takeN = (subscription: PubSub.Subscription<StoredEvent>, count: number, ms = 60_000) =>
  Effect.gen(function* () {
    const seen: Array<StoredEvent> = []
    while (seen.length < count) seen.push(...(yield* PubSub.takeAll(subscription)))
    return seen
  }).pipe(Effect.timeout(ms))
