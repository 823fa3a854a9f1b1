import { ThreadId } from "@planbridge/contracts"
import { resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { makeAcpAdapter } from "../../../src/provider/acp/AcpAdapter.ts"
import { cursorProfile } from "../../../src/provider/acp/profiles/cursor.ts"
import { adapterFailure, openSession, run } from "./harness.ts"

const root = resolve(import.meta.dirname, "../../../../..")
const profile = cursorProfile({
  command: resolve(root, "node_modules/.bin/tsx"),
  args: [resolve(import.meta.dirname, "scriptedCursorAgent.ts")]
})
const baseEnv = { PATH: process.env.PATH, HOME: process.env.HOME }

const startFailure = (env: Record<string, string | undefined>) =>
  openSession(makeAcpAdapter(profile, { env }), {
    threadId: ThreadId.make("thread-cursor-auth"),
    cwd: root,
    mode: "default"
  }).then(
    () => undefined,
    (e: unknown) => e
  )

describe("Cursor profile: credentials, session/load, agent crash (scripted Cursor agent)", () => {
  it("fails with a typed start_failed error naming the variables when no credentials are set", async () => {
    const error = await startFailure(baseEnv)
    expect(error).toMatchObject({ _tag: "AdapterError", kind: "start_failed" })
    expect(String((error as { message?: string }).message)).toContain("CURSOR_API_KEY or CURSOR_AUTH_TOKEN")
  })

  it("fails with start_failed when the agent program cannot be started", async () => {
    const missing = cursorProfile({ command: resolve(root, "no-such-agent-binary") })
    const error = await openSession(makeAcpAdapter(missing, { env: { ...baseEnv, CURSOR_API_KEY: "k" } }), {
      threadId: ThreadId.make("thread-cursor-missing"),
      cwd: root,
      mode: "default"
    }).then(
      () => undefined,
      (e: unknown) => e
    )
    expect(error).toMatchObject({
      _tag: "AdapterError",
      kind: "start_failed",
      message: expect.stringContaining("ENOENT")
    })
  })

  it("fails with start_failed when the agent rejects cursor_login", async () => {
    // The scripted agent accepts only CURSOR_API_KEY, like an expired token would be refused.
    const error = await startFailure({ ...baseEnv, CURSOR_AUTH_TOKEN: "stale" })
    expect(error).toMatchObject({ _tag: "AdapterError", kind: "start_failed" })
    expect(String((error as { message?: string }).message)).toContain("authentication failed")
  })

  it("resumes a native session with session/load; replayed history is counted, not mapped as new turns", async () => {
    const open = await openSession(makeAcpAdapter(profile, { env: { ...baseEnv, CURSOR_API_KEY: "k" } }), {
      threadId: ThreadId.make("thread-cursor-load"),
      cwd: root,
      mode: "default",
      resumeNativeSessionId: "earlier-session"
    })
    try {
      expect(open.log.ofType("session.started")[0]?.payload).toMatchObject({
        resumed: true,
        nativeSessionId: "earlier-session"
      })
      expect(open.log.ofType("runtime.warning")[0]?.payload).toMatchObject({ code: "history_not_mapped" })
      expect(open.log.ofType("content.delta")).toEqual([])
    } finally {
      await open.close()
    }
  })

  it("maps an agent crash: pending request provider_exited, turn failed, session.exited crashed; later calls refused", async () => {
    const open = await openSession(makeAcpAdapter(profile, { env: { ...baseEnv, CURSOR_API_KEY: "k" } }), {
      threadId: ThreadId.make("thread-cursor-crash"),
      cwd: root,
      mode: "default"
    })
    try {
      const turnId = await run(open.session.startTurn({ text: "SCENARIO:CRASH" }))
      const exited = await open.log.waitFor("session.exited")
      expect(exited.payload).toMatchObject({ exitKind: "crashed", exitCode: 3 })
      const after = open.log.events.map((e) => e.type)
      expect(after.slice(after.indexOf("request.opened"))).toEqual([
        "request.opened",
        "session.state.changed",
        "item.started",
        "content.delta",
        // The open text item is closed at exit, with what streamed.
        "item.completed",
        "request.resolved",
        "turn.completed",
        "session.exited",
        "session.state.changed"
      ])
      expect(open.log.ofType("request.resolved")[0]?.payload.resolution).toBe("provider_exited")
      expect(open.log.ofType("turn.completed")[0]).toMatchObject({ turnId, payload: { status: "failed" } })
      expect((await adapterFailure(open.session.startTurn({ text: "again" }))).kind).toBe("provider_exited")
    } finally {
      await open.close()
    }
  })
})
