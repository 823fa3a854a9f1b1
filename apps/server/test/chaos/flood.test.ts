import { resolve } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { startServer } from "../../src/http/HttpServer.ts"
import { makeAcpAdapter } from "../../src/provider/acp/AcpAdapter.ts"
import { cursorProfile } from "../../src/provider/acp/profiles/cursor.ts"
import { INBOUND_QUEUE_LINES, makeFlowProbe } from "../../src/provider/inbound.ts"
import { FLOOD_REPORT_ENV } from "../provider/acp/flood.ts"
import { describeFlood, floodReportFile, runFlood } from "./flood.ts"
import { cleanup, ROOT, tempDir } from "./rig.ts"

/**
 * Issue 13, item 4, the short flood (`npm run chaos` runs 200,000 chunks against `planbridge
 * serve`): 20,000 chunks from the scripted Cursor agent into a real server. The turn completes,
 * the stored text is exactly what was sent, the transport never had more than
 * `INBOUND_QUEUE_LINES` lines waiting, and so the agent could not get far ahead of the server:
 * when it had written its last chunk, most of them had already been committed and sent.
 */
afterAll(cleanup)

const COUNT = 20_000

describe("an agent flooding the server with small chunks", () => {
  const title = `${COUNT} chunks: the turn completes, the text is whole, ≤ ${INBOUND_QUEUE_LINES} lines read ahead`
  it(
    title,
    async () => {
      const probe = makeFlowProbe()
      const reportFile = floodReportFile()
      const profile = cursorProfile({
        command: resolve(ROOT, "node_modules/.bin/tsx"),
        args: [resolve(ROOT, "apps/server/test/provider/acp/scriptedCursorAgent.ts")]
      })
      const env = {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        CURSOR_API_KEY: "test-key",
        [FLOOD_REPORT_ENV]: reportFile
      }
      const server = await startServer({
        dataDir: tempDir("planbridge-flood-"),
        host: "127.0.0.1",
        port: 0,
        logLevel: "silent",
        providers: [{ adapter: makeAcpAdapter(profile, { env, probe }), capabilities: profile.capabilities }]
      })
      try {
        const { url, token } = server
        const figures = await runFlood({ url, token, count: COUNT, reportFile, timeoutMs: 60_000 })
        console.log(
          `${describeFlood(figures)}; read ahead at most ${probe.highWaterLines} lines, ${probe.pauses} pauses`
        )
        expect(figures.completed).toBe(true)
        expect(figures.textWhole).toBe(true)
        expect(figures.streamWhole).toBe(true)
        expect(probe.highWaterLines).toBeLessThanOrEqual(INBOUND_QUEUE_LINES)
        expect(probe.pauses).toBeGreaterThan(0)
        // Without the bound the agent finished writing long before the server (about 19,000 ahead).
        expect(figures.aheadAtAgentDone).toBeDefined()
        expect(figures.aheadAtAgentDone!).toBeLessThan(COUNT / 4)
      } finally {
        await server.close()
      }
    },
    90_000
  )
})
