import type { RuntimeEvent } from "@planbridge/contracts"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EmitError, type EmitRuntimeEvent } from "../../../src/provider/ProviderAdapter.ts"
import { assertLoopbackOnly } from "../../support/loopbackOnly.ts"
import { lastToolResults, toolResultText, withoutSystemReminders } from "../../support/mockMessagesModel.ts"
import { startClaudeHarness, type ClaudeHarness } from "./harness.ts"

/**
 * The real Claude Agent SDK when an event cannot be recorded (the database refuses it): the
 * failure is one `runtime.error` naming the event, the rest of that SDK message is still
 * recorded, and a request that clients may never have seen is denied, never left hanging.
 */

/** Fails the next event that matches, once. */
let failNext: ((event: RuntimeEvent) => boolean) | undefined
const emit: EmitRuntimeEvent = (event) =>
  Effect.suspend(() => {
    if (failNext?.(event) !== true) return Effect.void
    failNext = undefined
    return Effect.fail(new EmitError({ cause: new Error("disk full (test)") }))
  })

let h: ClaudeHarness
beforeAll(async () => {
  assertLoopbackOnly()
  h = await startClaudeHarness({ mode: "default", emit })
})
afterAll(async () => {
  await h?.close()
})

const errorsAfter = (mark: number) => h.events.slice(mark).filter((e) => e.type === "runtime.error")

describe("Claude adapter: events that cannot be recorded", () => {
  it("reports a failed event of an SDK message as runtime.error and still records the rest of it", async () => {
    h.mock.script({ blocks: [{ type: "text", text: "Hello." }] })
    const mark = h.events.length
    failNext = (e) => e.type === "turn.completed"
    const turnId = await h.run(h.session.startTurn({ text: "Say hello" }))
    // The `result` message maps to turn.completed then session.state.changed(idle).
    const idle = await h.waitFor("session.state.changed", { after: mark, where: (e) => e.payload.state === "idle" })
    const errors = errorsAfter(mark)
    expect(errors.map((e) => e.type === "runtime.error" && [e.payload.code, e.payload.fatal])).toEqual([
      ["claude.emit_failed", false]
    ])
    expect(errors[0]?.type === "runtime.error" && errors[0].payload.message).toContain("turn.completed")
    expect(errors[0]?.raw?.method).toBe("result/success")
    expect(h.events.indexOf(errors[0]!)).toBeLessThan(h.events.indexOf(idle))
    // The session goes on: the next turn runs and completes.
    h.mock.script({ blocks: [{ type: "text", text: "Again." }] })
    const mark2 = h.events.length
    const next = await h.run(h.session.startTurn({ text: "Once more" }))
    expect(next).not.toBe(turnId)
    expect((await h.waitFor("turn.completed", { after: mark2 })).payload.status).toBe("completed")
  })

  it("denies a permission request whose opening could not be recorded, and records that", async () => {
    h.mock.script(
      {
        blocks: [
          { type: "tool_use", name: "Bash", input: { command: "echo never > never.txt", description: "write a file" } }
        ]
      },
      { blocks: [{ type: "text", text: "Understood." }] }
    )
    const mark = h.events.length
    failNext = (e) => e.type === "request.opened"
    await h.run(h.session.startTurn({ text: "Run a command" }))
    const completed = await h.waitFor("turn.completed", { after: mark })
    expect(completed.payload.status).toBe("completed")
    const errors = errorsAfter(mark)
    expect(errors).toHaveLength(1)
    expect(errors[0]?.type === "runtime.error" && errors[0].payload.message).toContain("request.opened")
    const resolved = h.events.slice(mark).filter((e) => e.type === "request.resolved")
    expect(resolved.map((e) => e.type === "request.resolved" && e.payload.resolution)).toEqual(["cancelled"])
    // What the model got is that denial, nothing else.
    const results = lastToolResults(h.mock.mainRequests().at(-1)?.body ?? {})
    expect(results.map((r) => [r.is_error, withoutSystemReminders(toolResultText(r))])).toEqual([
      [true, "Planbridge could not present this request."]
    ])
  })
})
