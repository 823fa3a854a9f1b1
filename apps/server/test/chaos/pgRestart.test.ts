import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { startPostgres, type TestPostgres } from "../support/postgres.ts"
import { describePgRestarts, runPgRestarts } from "./pgRestart.ts"
import { cleanup } from "./rig.ts"

/**
 * Issue 31, items 2 and 3, the short run (`scripts/chaos-pg-restarts.ts` runs 20 and more):
 * `planbridge serve` on a PostgreSQL cluster this test starts and restarts `-m immediate` while
 * an agent floods a turn with chunks. The server survives every restart, and every chunk the
 * agent sent is in the log, in order, with no `emit_failed` in its place.
 */
let postgres: TestPostgres
beforeAll(async () => {
  postgres = await startPostgres()
})
afterAll(() => {
  postgres?.stop()
  cleanup()
})

const RESTARTS = 3

describe("PostgreSQL restarted under a streaming session", () => {
  it(`${RESTARTS} restarts -m immediate: the server never exits, no chunk is missing`, async () => {
    assertLoopbackOnly()
    const figures = await runPgRestarts({ postgres, database: "chaos_restarts", restarts: RESTARTS, seed: 31 })
    console.log(describePgRestarts(figures))
    expect(figures.failures).toEqual([])
    expect(figures).toMatchObject({
      serverExits: 0,
      chunksMissing: 0,
      turnsNotWhole: 0,
      turnsIncomplete: 0,
      emitFailed: 0
    })
    expect(figures.underLoad).toBeGreaterThan(0)
  }, 240_000)
})
