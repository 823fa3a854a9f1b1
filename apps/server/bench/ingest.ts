import BetterSqlite3 from "better-sqlite3"
import { Effect } from "effect"
import { RuntimeIngestion } from "../src/orchestration/RuntimeIngestion.ts"
import { generateEventMix } from "../test/support/eventMix.ts"
import { runWithIngestion, tempDir } from "../test/support/ingestionRuntime.ts"

/**
 * Canonical events per second ingested (validated, logged, projected, committed, published)
 * against the physical limit measured in the same run: the same serialized events inserted
 * into a bare one-table SQLite file by better-sqlite3 in batched transactions, with the same
 * pragmas. The events are handed to ingestion as plain JSON values, as an adapter would.
 */
export const benchIngest = async (options: { readonly count: number; readonly batch: number }) => {
  const events = generateEventMix({ seed: 42, count: options.count, threads: 50 })
  const wire = events.map((e) => JSON.parse(JSON.stringify(e)) as unknown)

  const bare = tempDir("bench-bare")
  const bareRate = (() => {
    const db = new BetterSqlite3(`${bare.dir}/bare.db`)
    db.pragma("journal_mode = WAL")
    db.pragma("synchronous = NORMAL")
    db.exec("create table events (seq integer primary key, event_id text not null unique, payload text not null)")
    const insert = db.prepare("insert into events (event_id, payload) values (?, ?)")
    const insertBatch = db.transaction((batch: ReadonlyArray<unknown>) => {
      for (const e of batch) insert.run((e as { eventId: string }).eventId, JSON.stringify(e))
    })
    const start = performance.now()
    for (let i = 0; i < wire.length; i += options.batch) insertBatch(wire.slice(i, i + options.batch))
    const seconds = (performance.now() - start) / 1000
    db.close()
    return wire.length / seconds
  })()
  bare.cleanup()

  const ours = tempDir("bench-ingest")
  const ourRate = await runWithIngestion(
    `${ours.dir}/planbridge.db`,
    Effect.gen(function* () {
      const ingestion = yield* RuntimeIngestion
      const subscription = yield* ingestion.subscribe
      const start = performance.now()
      for (let i = 0; i < wire.length; i += options.batch) yield* ingestion.ingestAll(wire.slice(i, i + options.batch))
      const seconds = (performance.now() - start) / 1000
      void subscription
      return wire.length / seconds
    })
  )
  ours.cleanup()
  return { events: wire.length, batch: options.batch, bareRate, ourRate, ratio: ourRate / bareRate }
}
