import { Effect, Fiber, Layer, PubSub } from "effect"
import pg from "pg"
import { RuntimeIngestion } from "../src/orchestration/RuntimeIngestion.ts"
import { postgresStore } from "../src/persistence/postgres/PgStore.ts"
import { generateEventMix } from "../test/support/eventMix.ts"
import { startPostgres, type TestPostgres } from "../test/support/postgres.ts"

/** Wall and CPU seconds since the clock was started. */
const startClock = () => {
  const start = performance.now()
  const cpu = process.cpuUsage()
  return () => {
    const used = process.cpuUsage(cpu)
    return { seconds: (performance.now() - start) / 1000, cpuSeconds: (used.user + used.system) / 1e6 }
  }
}

/** A throw-away PostgreSQL 15 for the bench (the tests' fixture: loopback port, removed afterwards), fsync on. */
export const benchPostgres = (): Promise<TestPostgres> => startPostgres({ durable: true })

/**
 * Canonical events per second ingested into the PostgreSQL store (validated, logged, projected,
 * committed, published and read by a live subscriber) against the limit measured on the same
 * server in the same run: the same serialized events inserted into a bare one-table database in
 * batched transactions (one multi-row INSERT per batch, the store's own way of inserting).
 */
export const benchPostgresIngest = async (
  postgres: TestPostgres,
  options: { readonly count: number; readonly batch: number; readonly run: number }
) => {
  const events = generateEventMix({ seed: 42, count: options.count, threads: 50, prefix: `pg${options.run}` })
  const wire = events.map((e) => JSON.parse(JSON.stringify(e)) as unknown)

  const bareUrl = await postgres.createDatabase(`bench_bare_${options.run}`)
  const client = new pg.Client({ connectionString: bareUrl })
  await client.connect()
  await client.query(
    "create table events (seq bigserial primary key, event_id text not null unique, payload text not null)"
  )
  const bareClock = startClock()
  for (let i = 0; i < wire.length; i += options.batch) {
    const batch = wire.slice(i, i + options.batch)
    await client.query("begin")
    await client.query("insert into events (event_id, payload) select * from unnest($1::text[], $2::text[])", [
      batch.map((e) => (e as { eventId: string }).eventId),
      batch.map((e) => JSON.stringify(e))
    ])
    await client.query("commit")
  }
  const bareTime = bareClock()
  await client.end()

  const url = await postgres.createDatabase(`bench_store_${options.run}`)
  const ourTime = await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        const subscription = yield* ingestion.subscribe
        const drain = Effect.gen(function* () {
          let seen = 0
          while (seen < wire.length) seen += (yield* PubSub.takeAll(subscription)).length
          return seen
        })
        const clock = startClock()
        const subscriber = yield* Effect.forkScoped(drain)
        for (let i = 0; i < wire.length; i += options.batch)
          yield* ingestion.ingestAll(wire.slice(i, i + options.batch))
        const seen = yield* Fiber.join(subscriber)
        const elapsed = clock()
        if (seen !== wire.length) throw new Error(`the subscriber saw ${seen} of ${wire.length} events`)
        return elapsed
      })
    ).pipe(Effect.provide(RuntimeIngestion.layer.pipe(Layer.provideMerge(postgresStore({ url })))))
  )
  const bareRate = wire.length / bareTime.seconds
  const ourRate = wire.length / ourTime.seconds
  return {
    events: wire.length,
    batch: options.batch,
    bareRate,
    ourRate,
    ratio: ourRate / bareRate,
    ourCpuSeconds: ourTime.cpuSeconds
  }
}

/** p50 and p99 (ms) of a bare one-row INSERT committed on its own: the floor of one event's durability. */
export const benchPostgresCommit = async (postgres: TestPostgres, samples = 500) => {
  const url = await postgres.createDatabase("bench_commit")
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query(
    "create table events (seq bigserial primary key, event_id text not null unique, payload text not null)"
  )
  const times: Array<number> = []
  for (let i = 0; i < samples; i++) {
    const started = performance.now()
    await client.query("insert into events (event_id, payload) values ($1, $2)", [`e${i}`, "{}"])
    times.push(performance.now() - started)
  }
  await client.end()
  times.sort((a, b) => a - b)
  return { p50: times[Math.floor(samples / 2)]!, p99: times[Math.floor(samples * 0.99)]! }
}
