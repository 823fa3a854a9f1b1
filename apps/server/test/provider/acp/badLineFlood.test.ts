import { ThreadId, type RuntimeEventOf } from "@planbridge/contracts"
import { resolve } from "node:path"
import { afterEach, describe, expect, it, vi } from "vitest"
import { makeAcpAdapter } from "../../../src/provider/acp/AcpAdapter.ts"
import { cursorProfile } from "../../../src/provider/acp/profiles/cursor.ts"
import { PROVIDER_LOG_LINES } from "../../../src/provider/logBudget.ts"
import { openSession, recording, replayOfLive, run } from "./harness.ts"
import { badFloodLine } from "./malformedLines.ts"

/**
 * Issue 13 (hardening), the bad-line flood: of 20,000 bad agent lines (not JSON, batches, bare
 * scalars, responses to nothing, undecodable updates) 7,500 used to leave no event and no log
 * line, while the ACP SDK printed 6,250 lines of its own to the console. Now every line is one
 * `runtime.warning` (an exact record, in the event log), nothing reaches the SDK that it would
 * complain about on the console, and the log gets at most `PROVIDER_LOG_LINES` a minute.
 */
const root = resolve(import.meta.dirname, "../../../../..")
const profile = cursorProfile({
  command: resolve(root, "node_modules/.bin/tsx"),
  args: [resolve(import.meta.dirname, "scriptedCursorAgent.ts")]
})
const env = { PATH: process.env.PATH, HOME: process.env.HOME, CURSOR_API_KEY: "test-key" }
const COUNT = 20_000

afterEach(() => {
  vi.restoreAllMocks()
})

/** Every line written to the console (the SDK's output and Effect's default logger alike). */
const captureConsole = () => {
  const lines: Array<string> = []
  for (const method of ["log", "info", "warn", "error", "debug"] as const) {
    vi.spyOn(console, method).mockImplementation((...args: Array<unknown>) => {
      lines.push(args.map(String).join(" "))
    })
  }
  return lines
}

describe("a flood of bad agent lines", () => {
  const title = `${COUNT} bad lines: ${COUNT} warnings in order, no SDK console lines, ≤ ${PROVIDER_LOG_LINES} logged`
  it(
    title,
    async () => {
      const threadId = ThreadId.make("thread-bad-flood")
      const { recorder, options } = recording("cursor", threadId)
      const adapter = makeAcpAdapter(profile, { env, ...options })
      const open = await openSession(adapter, { threadId, cwd: root, mode: "default" })
      const consoleLines = captureConsole()
      try {
        const { log, session } = open
        const from = log.events.length
        const turnId = await run(session.startTurn({ text: `SCENARIO:BAD_FLOOD count=${COUNT}` }))
        const completed = await log.waitFor("turn.completed", (e) => e.turnId === turnId, { ms: 60_000 })
        expect(completed.payload.status).toBe("completed")
        const warnings = log.events
          .slice(from)
          .filter((e): e is RuntimeEventOf<"runtime.warning"> => e.type === "runtime.warning")
        expect(warnings).toHaveLength(COUNT)
        const seen = warnings.map((w) => {
          const detail = w.payload.detail
          const reason = typeof detail === "object" && detail !== null && "reason" in detail ? detail.reason : undefined
          return reason === undefined ? w.payload.code : `${w.payload.code}:${String(reason)}`
        })
        const expected = Array.from({ length: COUNT }, (_, i) => {
          const bad = badFloodLine(i)
          return bad.reason === undefined ? bad.code : `${bad.code}:${bad.reason}`
        })
        expect(seen).toEqual(expected)
        expect(log.assistantText(turnId)).toContain("Bad flood done.")
      } finally {
        vi.restoreAllMocks()
        await open.close()
      }
      // Only the session's own summaries, within their budget; nothing from the SDK.
      expect(consoleLines.filter((l) => !l.includes("cursor: "))).toEqual([])
      expect(consoleLines.length).toBeGreaterThan(0)
      expect(consoleLines.length).toBeLessThanOrEqual(PROVIDER_LOG_LINES)

      // Recorded where the session processed them; the replay says the same.
      const { live, replayed } = await replayOfLive(recorder, open.log, threadId)
      expect(replayed).toEqual(live)
    },
    90_000
  )
})
