import { Effect, Fiber, PubSub } from "effect"
import "../src/orchestration/CompiledEventDecoding.ts"
import { RuntimeIngestion } from "../src/orchestration/RuntimeIngestion.ts"
import { generateEventMix } from "../test/support/eventMix.ts"
import { runWithIngestion, tempDir } from "../test/support/ingestionRuntime.ts"

/**
 * What group commit buys a hot session (issue 31, item 5; kernel/groupCommit.ts): the CPU time
 * per event of ingestion (validated, logged, projected, committed, published, read by a live
 * subscriber) when one thread's events come `burst` to a transaction, as a session records a
 * burst of lines. At 1,000 lines/s each line was a transaction (burst 1); with the 2 ms window
 * a line a millisecond gives bursts of 2–3. CPU time, which a loaded machine distorts little
 * (a 1 ms-paced stream it does: its timers fire late and the lines bunch up by themselves).
 */
export const ingestCpuPerEvent = async (burst: number, count = 5_000, warmUp = 1_000): Promise<number> => {
  const wire = generateEventMix({ seed: 7, count: warmUp + count, threads: 1 }).map(
    (e) => JSON.parse(JSON.stringify(e)) as unknown
  )
  const dir = tempDir("bench-burst")
  try {
    return await runWithIngestion(
      `${dir.dir}/planbridge.db`,
      Effect.gen(function* () {
        const ingestion = yield* RuntimeIngestion
        const subscription = yield* ingestion.subscribe
        const drain = Effect.gen(function* () {
          let seen = 0
          while (seen < wire.length) seen += (yield* PubSub.takeAll(subscription)).length
        })
        const subscriber = yield* Effect.forkScoped(drain)
        const ingestFrom = (start: number, end: number) =>
          Effect.gen(function* () {
            for (let i = start; i < end; i += burst) {
              // One line's single event goes through `ingest`, as the session runner's `emit`.
              if (burst === 1) yield* ingestion.ingest(wire[i])
              else yield* ingestion.ingestAll(wire.slice(i, Math.min(end, i + burst)))
              // The subscriber takes each commit as the fan-out would, not all at the end.
              yield* Effect.yieldNow
            }
          })
        yield* ingestFrom(0, warmUp)
        const cpu = process.cpuUsage()
        yield* ingestFrom(warmUp, wire.length)
        yield* Fiber.join(subscriber)
        const used = process.cpuUsage(cpu)
        return (used.user + used.system) / 1_000 / count
      })
    )
  } finally {
    dir.cleanup()
  }
}
