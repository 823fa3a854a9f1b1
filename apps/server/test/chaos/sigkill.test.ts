import { afterAll, describe, expect, it } from "vitest"
import { assertLoopbackOnly } from "../support/loopbackOnly.ts"
import { cleanup } from "./rig.ts"
import { describeSigkill, runSigkillCycles } from "./sigkill.ts"

/**
 * The short SIGKILL chaos (`npm run chaos` runs many more cycles): `planbridge serve` with a
 * streaming Cursor session, SIGKILLed at a random moment and restarted on the same data dir.
 * Nothing the client saw is lost, nothing is stored twice, sequences stay gap-free, no provider
 * process survives its server, and what was pending is closed `server_restarted`.
 */
afterAll(cleanup)

const CYCLES = 6

describe("SIGKILL cycles with a streaming session", () => {
  const title = `${CYCLES} cycles: nothing lost or duplicated, gap-free, no orphans, pending closed server_restarted`
  it(
    title,
    async () => {
      assertLoopbackOnly()
      const figures = await runSigkillCycles({ cycles: CYCLES, seed: 7 })
      console.log(describeSigkill(figures))
      expect(figures.failures).toEqual([])
      const clean = { lost: 0, duplicated: 0, gaps: 0, orphans: 0, unclosedTurns: 0, liveAfterRestart: 0 }
      expect(figures).toMatchObject(clean)
      expect(figures.promptsClosedRestarted).toBe(figures.promptsOpenAtKill)
      expect(figures.eventsSeen).toBeGreaterThan(0)
    },
    120_000
  )
})
