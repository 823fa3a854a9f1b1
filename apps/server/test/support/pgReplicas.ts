import { Effect, Layer, PubSub } from "effect"
import pg from "pg"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import type { StoredEvent } from "../../src/persistence/EventStore.ts"
import { postgresStore } from "../../src/persistence/postgres/PgStore.ts"

/** One writer process as the server wires it: its own pool, LISTEN connection and origin. */
export const pgReplica = (url: string) => RuntimeIngestion.layer.pipe(Layer.provideMerge(postgresStore({ url })))

/** The thread whose inserts `holdSlowThread` holds. */
export const SLOW_THREAD = "slow-thread"

/**
 * Holds every insert of `SLOW_THREAD`'s events for `ms` (a trigger sleeping in the insert), so that
 * its append transaction stays open with its locks taken and its `seq` drawn: what the tests of
 * concurrent appends hold one append with while others go on. Installed for the database at `url`
 * through a connection of its own, closed with the scope.
 */
export const holdSlowThread = (url: string, ms: number) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const admin = new pg.Client({ connectionString: url })
      admin.on("error", () => undefined)
      await admin.connect()
      await admin.query(`create function slow_insert() returns trigger language plpgsql as
          $$ begin perform pg_sleep(${ms / 1000}); return new; end $$;
        create trigger slow_insert before insert on events for each row
          when (new.thread_id = '${SLOW_THREAD}') execute function slow_insert()`)
      return admin
    }),
    (admin) => Effect.promise(() => admin.end())
  )

/** Takes from a store's subscription until `count` events arrived, or fails after `ms`. */
export const takeN = (subscription: PubSub.Subscription<StoredEvent>, count: number, ms = 60_000) =>
  Effect.gen(function* () {
    const seen: Array<StoredEvent> = []
    while (seen.length < count) seen.push(...(yield* PubSub.takeAll(subscription)))
    return seen
  }).pipe(Effect.timeout(ms))
