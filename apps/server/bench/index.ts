import { benchIngest } from "./ingest.ts"

const which = new Set(process.argv.slice(2))
const all = which.size === 0

if (all || which.has("ingest")) {
  // Warm-up run so that JIT compilation does not count against either side.
  await benchIngest({ count: 5_000, batch: 500 })
  const r = await benchIngest({ count: 50_000, batch: 500 })
  console.log(
    `ingest: ${r.events} events in batches of ${r.batch}: planbridge ${Math.round(r.ourRate)} ev/s, ` +
      `bare SQLite ${Math.round(r.bareRate)} ev/s, ratio ${r.ratio.toFixed(3)} (goal ≥ 0.5)`
  )
}
