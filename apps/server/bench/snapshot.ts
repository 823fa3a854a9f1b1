import { TURN_WINDOW, type RuntimeEvent } from "@planbridge/contracts"
import { Effect } from "effect"
import { RuntimeIngestion } from "../src/orchestration/RuntimeIngestion.ts"
import { Database } from "../src/persistence/Database.ts"
import { readThreadHistoryJson, readThreadSnapshotJson } from "../src/persistence/ThreadSnapshotJson.ts"
import { generateEventMix } from "../test/support/eventMix.ts"
import { runWithIngestion, tempDir } from "../test/support/ingestionRuntime.ts"

export const CHUNK = 50_000
const THREAD = "snapshot-bench-thread"

/** Events of one thread, generated a chunk at a time (a 1M-event array would take gigabytes). */
export const chunkOf = (index: number, count: number, threadId = THREAD): ReadonlyArray<RuntimeEvent> =>
  generateEventMix({ seed: 100 + index, count, threads: 1, prefix: `c${index}` }).map((e) => ({
    ...e,
    threadId: threadId as RuntimeEvent["threadId"]
  }))

const median = (xs: Array<number>) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/**
 * The cost of a thread's snapshot (read from its projections as the JSON text the feed sends:
 * the window of the latest `TURN_WINDOW.default` turns) for a thread of `count` events, next to
 * what reading its whole history costs (the window, then every page back, `TURN_WINDOW.max`
 * turns a page): the first should follow the thread's live state, not its number of events.
 */
export const benchSnapshot = async (count: number) => {
  const scratch = tempDir("bench-snapshot")
  try {
    return await runWithIngestion(
      `${scratch.dir}/planbridge.db`,
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        for (let done = 0, index = 0; done < count; index++) {
          const chunk = chunkOf(index, Math.min(CHUNK, count - done))
          for (let i = 0; i < chunk.length; i += 5_000) yield* ingestion.ingestAll(chunk.slice(i, i + 5_000))
          done += chunk.length
        }
        const { db } = yield* Database
        const times: Array<number> = []
        const wholeTimes: Array<number> = []
        let bytes = 0
        let wholeBytes = 0
        let pages = 0
        for (let i = 0; i < 7; i++) {
          let started = performance.now()
          const window = readThreadSnapshotJson(db, THREAD, TURN_WINDOW.default)!
          times.push(performance.now() - started)
          bytes = window.json.length
          started = performance.now()
          let text = readThreadSnapshotJson(db, THREAD, TURN_WINDOW.max)!.json
          wholeBytes = text.length
          pages = 0
          for (;;) {
            const older = (JSON.parse(text) as { olderTurns: { before: string } | null }).olderTurns
            if (older === null) break
            const page = readThreadHistoryJson(db, THREAD, older.before, TURN_WINDOW.max)
            if (typeof page === "string") throw new Error(`page refused: ${page}`)
            text = page.json
            wholeBytes += text.length
            pages++
          }
          wholeTimes.push(performance.now() - started)
        }
        return { events: count, ms: median(times), bytes, wholeMs: median(wholeTimes), wholeBytes, pages }
      })
    )
  } finally {
    scratch.cleanup()
  }
}
