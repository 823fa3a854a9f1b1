// Child process for the crash test: ingests a deterministic event mix in batches into the
// database named on the command line and reports each commit on stdout, until it is killed.
import { Effect } from "effect"
import { RuntimeIngestion } from "../../../src/orchestration/RuntimeIngestion.ts"
import { generateEventMix } from "../../support/eventMix.ts"
import { runWithIngestion } from "../../support/ingestionRuntime.ts"

const [file, seed] = process.argv.slice(2)
const events = generateEventMix({ seed: Number(seed), count: 200_000, threads: 8 })
await runWithIngestion(
  file!,
  Effect.gen(function* () {
    const ingestion = yield* RuntimeIngestion
    let i = 0
    for (;;) {
      const size = 1 + (i % 53)
      const batch = events.slice(i, i + size)
      if (batch.length === 0) return
      // Alternate single-event and batched ingestion, both go through the writer.
      if (size % 2 === 0) yield* ingestion.ingestAll(batch)
      else yield* Effect.forEach(batch, (e) => ingestion.ingest(e), { concurrency: "unbounded" })
      i += batch.length
      process.stdout.write(`committed ${i}\n`)
    }
  })
)
