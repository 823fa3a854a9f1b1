import BetterSqlite3 from "better-sqlite3"
import { Effect, Fiber, PubSub } from "effect"
import { RuntimeIngestion } from "../src/orchestration/RuntimeIngestion.ts"
import { collectGarbage } from "./collectGarbage.ts"
import { generateEventMix } from "../test/support/eventMix.ts"
import { runWithIngestion, tempDir } from "../test/support/ingestionRuntime.ts"

/** Wall and CPU (user + system, whole process) seconds since the clock was started. */
const startClock = () => {
  const start = performance.now()
  const cpu = process.cpuUsage()
  return () => {
    const used = process.cpuUsage(cpu)
    return { seconds: (performance.now() - start) / 1000, cpuSeconds: (used.user + used.system) / 1e6 }
  }
}

/**
 * Canonical events per second ingested (validated, logged, projected, committed, published and
 * read by a live subscriber) against the physical limit measured in the same run: the same
 * serialized events inserted into a bare one-table SQLite file by better-sqlite3 in batched
 * transactions, with the same pragmas. The events are handed to ingestion as plain JSON
 * values, as an adapter would.
 */
export const benchIngest = async (options: { readonly count: number; readonly batch: number }) => {
  const events = generateEventMix({ seed: 42, count: options.count, threads: 50 })
  const wire = events.map((e) => JSON.parse(JSON.stringify(e)) as unknown)

  const bare = tempDir("bench-bare")
  const bareTime = (() => {
    const db = new BetterSqlite3(`${bare.dir}/bare.db`)
    db.pragma("journal_mode = WAL")
    db.pragma("synchronous = NORMAL")
    db.exec("create table events (seq integer primary key, event_id text not null unique, payload text not null)")
    const insert = db.prepare("insert into events (event_id, payload) values (?, ?)")
    const insertBatch = db.transaction((batch: ReadonlyArray<unknown>) => {
      for (const e of batch) insert.run((e as { eventId: string }).eventId, JSON.stringify(e))
    })
    collectGarbage()
    const clock = startClock()
    for (let i = 0; i < wire.length; i += options.batch) insertBatch(wire.slice(i, i + options.batch))
    const elapsed = clock()
    db.close()
    return elapsed
  })()
  bare.cleanup()

  const ours = tempDir("bench-ingest")
  const ourTime = await runWithIngestion(
    `${ours.dir}/planbridge.db`,
    Effect.gen(function* () {
      const ingestion = yield* RuntimeIngestion
      // A live subscriber that reads every published event, as the WebSocket fan-out would.
      const subscription = yield* ingestion.subscribe
      const drain = Effect.gen(function* () {
        let seen = 0
        while (seen < wire.length) seen += (yield* PubSub.takeAll(subscription)).length
        return seen
      })
      collectGarbage()
      const clock = startClock()
      const subscriber = yield* Effect.forkScoped(drain)
      for (let i = 0; i < wire.length; i += options.batch) yield* ingestion.ingestAll(wire.slice(i, i + options.batch))
      const seen = yield* Fiber.join(subscriber)
      const elapsed = clock()
      if (seen !== wire.length) throw new Error(`the subscriber saw ${seen} of ${wire.length} events`)
      return elapsed
    })
  )
  ours.cleanup()
  const bareRate = wire.length / bareTime.seconds
  const ourRate = wire.length / ourTime.seconds
  return {
    events: wire.length,
    batch: options.batch,
    bareRate,
    ourRate,
    ratio: ourRate / bareRate,
    /** The same ratio in CPU time: steadier than wall time on a machine shared with other work. */
    cpuRatio: bareTime.cpuSeconds / ourTime.cpuSeconds,
    bareCpuSeconds: bareTime.cpuSeconds,
    ourCpuSeconds: ourTime.cpuSeconds
  }
}
