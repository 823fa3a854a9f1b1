import { TURN_WINDOW, type RuntimeEvent } from "@planbridge/contracts"
import { Effect } from "effect"
import { RuntimeIngestion } from "../src/orchestration/RuntimeIngestion.ts"
import { Database } from "../src/persistence/Database.ts"
import { readThreadSnapshotJson } from "../src/persistence/ThreadSnapshotJson.ts"
import { generateEventMix } from "../test/support/eventMix.ts"
import { runWithIngestion, tempDir } from "../test/support/ingestionRuntime.ts"

const CHUNK = 50_000
const THREAD = "snapshot-bench-thread"

/** Events of one thread, generated a chunk at a time (a 1M-event array would take gigabytes). */
const chunkOf = (index: number, count: number): ReadonlyArray<RuntimeEvent> =>
  generateEventMix({ seed: 100 + index, count, threads: 1, prefix: `c${index}` }).map((e) => ({
    ...e,
    threadId: THREAD as RuntimeEvent["threadId"]
  }))

const median = (xs: Array<number>) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/**
 * The cost of a thread's snapshot (read from its projections as the JSON text the feed sends)
 * for a thread of `count` events, next to the size of what it holds: it should follow the state
 * (turns, items, prompts), not the number of events behind it.
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
        let bytes = 0
        for (let i = 0; i < 7; i++) {
          const started = performance.now()
          bytes = readThreadSnapshotJson(db, THREAD, TURN_WINDOW.default)!.json.length
          times.push(performance.now() - started)
        }
        return { events: count, ms: median(times), bytes }
      })
    )
  } finally {
    scratch.cleanup()
  }
}
