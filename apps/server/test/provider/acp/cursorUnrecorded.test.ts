import { ThreadId, type RuntimeEvent } from "@planbridge/contracts"
import { Effect, Exit, Scope } from "effect"
import { resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { makeAcpAdapter } from "../../../src/provider/acp/AcpAdapter.ts"
import { cursorProfile } from "../../../src/provider/acp/profiles/cursor.ts"
import { EmitError } from "../../../src/provider/ProviderAdapter.ts"
import { EventLog, run } from "./harness.ts"

const root = resolve(import.meta.dirname, "../../../../..")
const profile = cursorProfile({
  command: resolve(root, "node_modules/.bin/tsx"),
  args: [resolve(import.meta.dirname, "scriptedCursorAgent.ts")]
})

describe("Cursor: an agent request whose events cannot be recorded (scripted Cursor agent)", () => {
  it("is cancelled (nobody can see it), so the agent goes on, the turn ends and no request stays pending", async () => {
    const log = new EventLog()
    // The database refuses the request's opening, as a full disk would; everything else is recorded.
    const refused = (event: RuntimeEvent) => event.type === "request.opened"
    const emit = (event: RuntimeEvent) =>
      refused(event) ? Effect.fail(new EmitError({ cause: new Error("disk full") })) : log.emit(event)
    const emitAll = (events: ReadonlyArray<RuntimeEvent>) =>
      events.some(refused) ? Effect.fail(new EmitError({ cause: new Error("disk full") })) : log.emitAll(events)
    const scope = Effect.runSync(Scope.make())
    try {
      const adapter = makeAcpAdapter(profile, { env: { PATH: process.env.PATH, CURSOR_API_KEY: "k" } })
      const session = await Effect.runPromise(
        Scope.provide(scope)(
          adapter.startSession({
            threadId: ThreadId.make("thread-unrecorded"),
            cwd: root,
            mode: "default",
            emit,
            emitAll
          })
        )
      )
      const turnId = await run(session.startTurn({ text: "SCENARIO:WAIT_PERMISSION" }))
      // Without the cancel the agent would wait for ever on its permission request.
      const completed = await log.waitFor("turn.completed", (e) => e.turnId === turnId, { ms: 60_000 })
      expect(completed.payload.status).toBe("completed")
      expect(log.ofType("runtime.error").map((e) => e.payload.code)).toContain("cursor.emit_failed")
      expect(log.ofType("request.resolved")).toMatchObject([{ payload: { resolution: "cancelled" } }])
      // Nothing is left waiting: the session is idle, and a new turn is not refused as busy.
      expect(log.ofType("session.state.changed").at(-1)?.payload.state).toBe("idle")
      await run(session.startTurn({ text: "hello again" }))
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 90_000)
})
