import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import {
  eventIds,
  liveScope,
  promptIdOf,
  recoveryEventId,
  replayIds,
  replayScope,
  requestIdOf
} from "../../../src/provider/kernel/ids.ts"

/** The one id scheme: every provider, replay and recovery draw their ids here. */

describe("kernel ids", () => {
  it("gives each live session of a thread its own scope, under the thread", () => {
    const scopes = Array.from({ length: 100 }, () => liveScope("thread-1"))
    expect(new Set(scopes).size).toBe(100)
    for (const scope of scopes) expect(scope).toMatch(/^thread-1:[0-9a-f]{12}$/)
  })

  it("numbers a session's events from 1 in its scope", () => {
    const next = eventIds("thread-1:abc")
    expect([next(), next(), next()]).toEqual(["thread-1:abc:event:1", "thread-1:abc:event:2", "thread-1:abc:event:3"])
  })

  it("replays in the recorded scope, so a replay gives the live session's ids, else in the thread's replay scope", async () => {
    const recorded = await Effect.runPromise(replayIds({ idPrefix: "thread-1:abc" }, "thread-2"))
    const live = eventIds("thread-1:abc")
    expect([0, 1].map((n) => recorded.eventId({ n }))).toEqual([live(), live()])
    const own = await Effect.runPromise(replayIds({ provider: "codex" }, "thread-2"))
    expect(own.scope).toBe(replayScope("thread-2"))
    expect(own.eventId({ n: 0 })).toBe("thread-2:r:event:1")
  })

  it("refuses a meta line whose idPrefix is not a string, naming line 0", async () => {
    const exit = await Effect.runPromiseExit(replayIds({ idPrefix: 7 }, "thread-2"))
    expect(Exit.isFailure(exit)).toBe(true)
    const error = await Effect.runPromise(Effect.flip(replayIds({ idPrefix: 7 }, "thread-2")))
    expect(error.reason).toMatchObject({ _tag: "InvalidTranscript", line: 0 })
    expect(error.message).toContain("idPrefix")
  })

  it("keeps the native request key whole in request and prompt ids", () => {
    expect(requestIdOf("thread-1", "turn:item:approval")).toBe("thread-1:request:turn:item:approval")
    expect(promptIdOf("thread-1:abc", "0")).toBe("thread-1:abc:prompt:0")
  })

  it("derives recovery's ids from what they close, the same on every server", () => {
    expect(recoveryEventId("prompt", "thread-1:prompt:x")).toBe("planbridge-recovery:prompt:thread-1:prompt:x")
  })
})
