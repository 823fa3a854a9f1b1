import { decodeRuntimeEventSync } from "@planbridge/contracts"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Fiber, Layer, PubSub } from "effect"
import { readFileSync, statSync } from "node:fs"
import "../src/orchestration/CompiledEventDecoding.ts"
import { RuntimeIngestion } from "../src/orchestration/RuntimeIngestion.ts"
import { Database } from "../src/persistence/Database.ts"
import { eventJsonOf } from "../src/persistence/EventJson.ts"
import { catchUpProjections } from "../src/persistence/ProjectionLag.ts"
import { sqliteStoreServices } from "../src/persistence/SqliteStore.ts"
import { DEFAULT_WAL_CHECKPOINTER } from "../src/persistence/WalCheckpointer.ts"
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

type InsertBatch = (db: BetterSqlite3.Database) => (batch: ReadonlyArray<unknown>) => void

/**
 * `wire` inserted in batches by `insertBatch` into a new SQLite file with the server's pragmas;
 * `measure` is told of the database once every batch is in (before it is closed and removed).
 */
const withInserts = <A>(
  label: string,
  schema: string,
  insertBatch: InsertBatch,
  wire: ReadonlyArray<unknown>,
  batch: number,
  measure: (db: BetterSqlite3.Database, file: string, run: () => void) => A
): A => {
  const dir = tempDir(label)
  const file = `${dir.dir}/${label}.db`
  const db = new BetterSqlite3(file)
  try {
    db.pragma("journal_mode = WAL")
    db.pragma("synchronous = NORMAL")
    db.exec(schema)
    const insert = insertBatch(db)
    return measure(db, file, () => {
      for (let i = 0; i < wire.length; i += batch) insert(wire.slice(i, i + batch))
    })
  } finally {
    db.close()
    dir.cleanup()
  }
}

/** Wall and CPU time of `wire` inserted in batches by `insertBatch` into a new SQLite file with the server's pragmas. */
const timedInserts = (
  label: string,
  schema: string,
  insertBatch: InsertBatch,
  wire: ReadonlyArray<unknown>,
  batch: number
) =>
  withInserts(label, schema, insertBatch, wire, batch, (_db, _file, run) => {
    collectGarbage()
    const clock = startClock()
    run()
    return clock()
  })

/** The bare side: one table, the event id unique, the event's JSON as it is. */
const BARE_SCHEMA =
  "create table events (seq integer primary key, event_id text not null unique, payload text not null)"
const bareInserts: InsertBatch = (db) => {
  const insert = db.prepare("insert into events (event_id, payload) values (?, ?)")
  return db.transaction((batch: ReadonlyArray<unknown>) => {
    for (const e of batch) insert.run((e as { eventId: string }).eventId, JSON.stringify(e))
  })
}

// The ceiling of any ingestion with this guarantees: the part of them that needs no
// design, i.e. each event validated (the server's compiled decoder) and appended to a log with
// the per-thread index (`thread_seq` gap-free per thread), in the same batched transactions, by
// the cheapest insert measured (rows in statements of 50, as the server's log). No projection,
// no publish, and no checkpoint at all (more favourable than any server, whose WAL must be
// checkpointed): a real ingestion does all this and more, so it cannot beat it.
const CEILING_SCHEMA =
  "pragma wal_autocheckpoint = 0; create table events (seq integer primary key, event_id text not null unique, " +
  "thread_id text not null, thread_seq integer not null, payload text not null); " +
  "create unique index events_thread_seq on events (thread_id, thread_seq)"
const ceilingInserts: InsertBatch = (db) => {
  const threadSeqs = new Map<string, number>()
  const statements = new Map<number, BetterSqlite3.Statement>()
  const insertRows = (values: ReadonlyArray<unknown>) => {
    const rows = values.length / 4
    let statement = statements.get(rows)
    if (statement === undefined) {
      const tuples = Array.from({ length: rows }, () => "(?, ?, ?, ?)").join(", ")
      statement = db.prepare(`insert into events (event_id, thread_id, thread_seq, payload) values ${tuples}`)
      statements.set(rows, statement)
    }
    statement.run(values)
  }
  return db.transaction((batch: ReadonlyArray<unknown>) => {
    for (let start = 0; start < batch.length; start += 50) {
      const values: Array<unknown> = []
      for (const input of batch.slice(start, start + 50)) {
        const event = decodeRuntimeEventSync(input)
        const threadSeq = (threadSeqs.get(event.threadId) ?? 0) + 1
        threadSeqs.set(event.threadId, threadSeq)
        values.push(event.eventId, event.threadId, threadSeq, eventJsonOf(event).event)
      }
      insertRows(values)
    }
  })
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

  const bareTime = timedInserts("bench-bare", BARE_SCHEMA, bareInserts, wire, options.batch)
  const ceilingTime = timedInserts("bench-ceiling", CEILING_SCHEMA, ceilingInserts, wire, options.batch)

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
      // The projections lag the log by a bounded tail (ProjectionLag.ts): it is projected before
      // the clock stops, so that every event's projection is counted.
      catchUpProjections((yield* Database).db)
      const elapsed = clock()
      if (seen !== wire.length) throw new Error(`the subscriber saw ${seen} of ${wire.length} events`)
      return elapsed
    })
  )
  ours.cleanup()
  const bareRate = wire.length / bareTime.seconds
  const ceilingRate = wire.length / ceilingTime.seconds
  const ourRate = wire.length / ourTime.seconds
  return {
    events: wire.length,
    batch: options.batch,
    bareRate,
    ceilingRate,
    ourRate,
    ratio: ourRate / bareRate,
    /** The validated, per-thread-indexed log against the limit: what no ingestion with the guarantees can exceed. */
    ceilingRatio: ceilingRate / bareRate,
    /** The same ratio in CPU time: steadier than wall time on a machine shared with other work. */
    cpuRatio: bareTime.cpuSeconds / ourTime.cpuSeconds,
    bareCpuSeconds: bareTime.cpuSeconds,
    ourCpuSeconds: ourTime.cpuSeconds
  }
}

/** A WAL file's header, and each frame's header before its page (sqlite.org/fileformat.html, "WAL File Format"). */
const WAL_HEADER_BYTES = 32
const WAL_FRAME_HEADER_BYTES = 24

/** The frames in the WAL file past the first `skip`, by the table or index their page belongs to (`dbstat`). */
const walFramesByBtree = (db: BetterSqlite3.Database, file: string, skip = 0): Map<string, number> => {
  const wal = readFileSync(`${file}-wal`)
  const pageSize = wal.readUInt32BE(8)
  const owner = new Map<number, string>()
  for (const row of db.prepare("select name, pageno from dbstat").all() as Array<{ name: string; pageno: number }>)
    owner.set(row.pageno, row.name)
  const frames = new Map<string, number>()
  let index = 0
  for (
    let at = WAL_HEADER_BYTES;
    at + WAL_FRAME_HEADER_BYTES + pageSize <= wal.length;
    at += WAL_FRAME_HEADER_BYTES + pageSize
  ) {
    if (index++ < skip) continue
    const name = owner.get(wal.readUInt32BE(at)) ?? "(free pages)"
    frames.set(name, (frames.get(name) ?? 0) + 1)
  }
  return frames
}

const walFrameCount = (file: string): number => {
  const bytes = statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0
  if (bytes === 0) return 0
  const pageSize = readFileSync(`${file}-wal`).readUInt32BE(8)
  return Math.floor((bytes - WAL_HEADER_BYTES) / (WAL_FRAME_HEADER_BYTES + pageSize))
}

/**
 * What each side writes (not timed): the WAL frames (pages) its commits write for the same
 * events and batches, by table or index, with no checkpoint at all so that every frame stays in
 * the WAL to be counted. A frame is a page written at a commit (4 KiB and a write each): the
 * `COMMIT` and the checkpoint that copies it later cost about as many frames as there are.
 * Frames written before the first event (schema, migrations) are not counted.
 */
export const ingestWalFrames = async (options: { readonly count: number; readonly batch: number }) => {
  const events = generateEventMix({ seed: 42, count: options.count, threads: 50 })
  const wire = events.map((e) => JSON.parse(JSON.stringify(e)) as unknown)
  const counted = (db: BetterSqlite3.Database, file: string, run: () => void) => {
    db.pragma("wal_autocheckpoint = 0")
    const skip = walFrameCount(file)
    run()
    return walFramesByBtree(db, file, skip)
  }
  const bare = withInserts("frames-bare", BARE_SCHEMA, bareInserts, wire, options.batch, counted)
  const ceiling = withInserts("frames-ceiling", CEILING_SCHEMA, ceilingInserts, wire, options.batch, counted)
  const ours = tempDir("frames-ingest")
  const file = `${ours.dir}/planbridge.db`
  // The server's layers, with the WAL checkpointer never started (it would empty the WAL).
  const layer = RuntimeIngestion.layer.pipe(
    Layer.provideMerge(sqliteStoreServices),
    Layer.provideMerge(
      Database.layer({ filename: file, walCheckpointer: { ...DEFAULT_WAL_CHECKPOINTER, startAtFrames: Infinity } })
    )
  )
  const planbridge = await Effect.runPromise(
    Effect.scoped(
      Effect.provide(
        Effect.gen(function* () {
          const { db, sqlite } = yield* Database
          const ingestion = yield* RuntimeIngestion
          sqlite.pragma("wal_autocheckpoint = 0")
          const skip = walFrameCount(file)
          for (let i = 0; i < wire.length; i += options.batch)
            yield* ingestion.ingestAll(wire.slice(i, i + options.batch))
          catchUpProjections(db)
          return walFramesByBtree(sqlite, file, skip)
        }),
        layer
      )
    )
  )
  ours.cleanup()
  const batches = Math.ceil(wire.length / options.batch)
  return { batches, bare, ceiling, planbridge }
}

/** `ingestWalFrames` as the bench's note: each side's frames per batch, its four largest b-trees named. */
export const ingestWalFramesNote = async (options: { readonly count: number; readonly batch: number }) => {
  const frames = await ingestWalFrames(options)
  const perBatch = (byBtree: ReadonlyMap<string, number>) => {
    const all = [...byBtree].sort((a, b) => b[1] - a[1])
    const total = all.reduce((sum, [, n]) => sum + n, 0) / frames.batches
    const top = all.slice(0, 4).map(([name, n]) => `${name} ${(n / frames.batches).toFixed(1)}`)
    return `${total.toFixed(1)} (${top.join(", ")})`
  }
  return (
    `ingest WAL frames (4 KiB pages written at commit) per batch of ${options.batch}, not timed: ` +
    `bare ${perBatch(frames.bare)}; ceiling ${perBatch(frames.ceiling)}; planbridge ${perBatch(frames.planbridge)}`
  )
}
