import { decodeRuntimeEventSync } from "@planbridge/contracts"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { redactResolvedSecrets } from "../../src/orchestration/SecretRedaction.ts"
import { Database, type Db } from "../../src/persistence/Database.ts"
import { eventJsonOf } from "../../src/persistence/EventJson.ts"
import type { BeforeAppend } from "../../src/persistence/EventStore.ts"
import { catchUpProjections, type ProjectionLagOptions } from "../../src/persistence/ProjectionLag.ts"
import { makeSqliteEventLog } from "../../src/persistence/SqliteEventLog.ts"
import { dumpProjections, rebuildProjections } from "../../src/persistence/SqliteProjectionRebuild.ts"
import { readThreadSnapshot } from "../../src/persistence/ThreadSnapshots.ts"
import { generateEventMix, prng } from "../support/eventMix.ts"
import { tempDir } from "../support/ingestionRuntime.ts"

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup()
})
const newFile = () => {
  const t = tempDir("projection-lag")
  cleanups.push(t.cleanup)
  return `${t.dir}/planbridge.db`
}

/** Runs `f` on a freshly opened database (closed afterwards, as a server's would be). */
const withDatabase = <A>(filename: string, f: (db: Db) => A | Promise<A>): Promise<A> =>
  Effect.runPromise(
    Effect.scoped(Effect.flatMap(Database.make({ filename }), ({ db }) => Effect.promise(async () => f(db))))
  )

/** Never projected by time: only the count bound, a reader or the next open projects. */
const lagOf = (lagEvents: number): ProjectionLagOptions => ({ lagEvents, lagChars: 1e12, lagMs: 1e9 })

/** As ingestion does (RuntimeIngestion.ts): a resolved secret is redacted with the prompt the log knows. */
const redact: BeforeAppend = (event, lookup) =>
  event.type === "user-input.resolved" && event.payload.answers.length > 0
    ? redactResolvedSecrets(event, lookup.prompt(event.payload.promptId))
    : event

/** The mix as ingestion hands it to the store: decoded (the log's JSON keeps the Schema's key order). */
const mix = (seed: number, count: number, threads: number) =>
  generateEventMix({ seed, count, threads }).map((event) => decodeRuntimeEventSync(event))

const count = (db: Db, table: string): number =>
  (db.$client.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n
const watermark = (db: Db): number =>
  (db.$client.prepare("select seq from projection_watermark").get() as { seq: number }).seq

/** The mix appended in batches of 1–12 events (most prompts resolved in a later batch than their request). */
const appendMix = (db: Db, lag: ProjectionLagOptions, events = mix(7, 1500, 5)) => {
  const log = makeSqliteEventLog(db, () => undefined, lag)
  const r = prng(3)
  for (let i = 0; i < events.length;) {
    const batch = events.slice(i, i + 1 + r.int(12))
    log.appendBatch(batch, redact, batch.map(eventJsonOf))
    i += batch.length
  }
  return log
}

const logRows = (db: Db) =>
  db.$client.prepare("select seq, thread_id, thread_seq, event, raw from events order by seq").all()

describe("projections lagging the SQLite log", () => {
  it("lag at most their bound, are brought up to the log before a read, and the watermark follows", async () => {
    await withDatabase(newFile(), (db) => {
      const events = mix(11, 400, 3)
      const log = makeSqliteEventLog(db, () => undefined, lagOf(100))
      log.lag.register()
      log.appendBatch(events.slice(0, 30), redact)
      log.appendBatch(events.slice(30, 60), redact)
      // Committed to the log, not yet projected.
      expect(log.lag.lag()).toBe(60)
      expect(count(db, "events")).toBe(60)
      expect(count(db, "threads")).toBe(0)
      expect(watermark(db)).toBe(0)
      // A reader projects first.
      const snapshot = readThreadSnapshot(db, events[0]!.threadId)
      expect(snapshot?.threadId).toBe(events[0]!.threadId)
      expect(log.lag.lag()).toBe(0)
      expect(watermark(db)).toBe(60)
      // The append that brings the lag to the bound projects it in its own transaction.
      for (let i = 60; i < 160; i += 25) log.appendBatch(events.slice(i, i + 25), redact)
      expect(log.lag.lag()).toBe(0)
      expect(watermark(db)).toBe(160)
      log.appendBatch(events.slice(160, 170), redact)
      expect(log.lag.lag()).toBe(10)
      // What the lag left is what a rebuild from the whole log leaves.
      expect(rebuildProjections(db, log, { dryRun: true }).differences).toEqual([])
      expect(watermark(db)).toBe(170)
      log.lag.close()
    })
  })

  it("write the same log and the same projections whatever the lag, secrets resolved while their prompt lags included", async () => {
    const reference = newFile()
    await withDatabase(reference, (db) => void appendMix(db, lagOf(1)).lag.close())
    const lagging = newFile()
    await withDatabase(lagging, (db) => {
      const log = appendMix(db, lagOf(1e9))
      expect(log.lag.lag()).toBe(1500)
      // Never closed: as after a crash, only the log holds the events past the watermark.
      expect(count(db, "items")).toBe(0)
    })
    const [expected, actual] = await Promise.all([
      withDatabase(reference, (db) => ({ log: logRows(db), projections: dumpProjections(db) })),
      // Opening the database projects what lagged (crash recovery).
      withDatabase(lagging, (db) => ({ log: logRows(db), projections: dumpProjections(db), watermark: watermark(db) }))
    ])
    expect(actual.watermark).toBe(1500)
    expect(actual.log).toEqual(expected.log)
    expect(actual.projections).toEqual(expected.projections)
    // Not vacuous: secret answers were redacted in the log, each resolved after its prompt's batch.
    expect(JSON.stringify(actual.log)).toContain(String.raw`\"redacted\":true`)
  })

  it("are projected within their time bound without a reader", async () => {
    await withDatabase(newFile(), async (db) => {
      const log = makeSqliteEventLog(db, () => undefined, { lagEvents: 1e9, lagChars: 1e12, lagMs: 20 })
      const events = mix(5, 50, 2)
      log.appendBatch(events, redact)
      expect(log.lag.lag()).toBe(50)
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(log.lag.lag()).toBe(0)
      expect(count(db, "threads")).toBe(new Set(events.map((e) => e.threadId)).size)
      expect(watermark(db)).toBe(50)
    })
  })

  it("are brought up to the log by catchUpProjections only for the connection whose log registered", async () => {
    await withDatabase(newFile(), (db) => {
      const log = makeSqliteEventLog(db, () => undefined, lagOf(1e9))
      log.appendBatch(mix(6, 20, 1), redact)
      catchUpProjections(db)
      expect(log.lag.lag()).toBe(20)
      log.lag.register()
      catchUpProjections(db)
      expect(log.lag.lag()).toBe(0)
      expect(count(db, "threads")).toBe(1)
      log.lag.close()
    })
  })
})
