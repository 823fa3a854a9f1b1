import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PlanbridgeClient } from "../src/index.ts"
import { startDemoServer, type DemoServer } from "./support/demoServer.ts"
import { until, Ws } from "./support/realServer.ts"

/**
 * Resume, then send at once (issue 27, item 5): the turn used to reach the server before the
 * resumed session was live and fail `session_not_live`. The client now holds a thread's session
 * commands until its `thread.resume` was answered. Against the real server in demo mode with the
 * real Codex app-server, restarted under the client.
 */
const STEP_MS = 120_000
let rig: DemoServer
beforeAll(async () => {
  rig = await startDemoServer()
}, STEP_MS)
afterAll(async () => rig?.close())

describe("a turn sent while the thread is being resumed", () => {
  it(
    "goes once the resume is answered, instead of failing session_not_live",
    async () => {
      const client = await PlanbridgeClient.connect({
        url: rig.server.url,
        token: rig.server.token,
        WebSocket: Ws,
        backoff: { initialMs: 20, maxMs: 200 }
      })
      const { threadId } = await client.startSession("codex", rig.cwd, "default")
      const store = await client.follow(threadId)
      const first = await client.startTurn(threadId, "Hello.")
      const turnEnded = (turnId: string) => () =>
        store.getSnapshot()?.turns.some((t) => t.turnId === turnId && t.status !== "inProgress") === true
      await until(store.subscribe, turnEnded(first.turnId), STEP_MS)

      // The server restarts: the thread is not live any more.
      const statuses: Array<string> = []
      client.onStatus((s) => statuses.push(s))
      await rig.restart()
      await until(
        (listener) => client.onStatus(listener),
        () => statuses.includes("reconnecting") && client.status === "open",
        STEP_MS
      )
      expect((await client.listThreads()).find((t) => t.threadId === threadId)?.live).toBe(false)

      // Resume, and send without waiting for it.
      const resumed = client.resumeThread(threadId)
      const second = client.startTurn(threadId, "Hello again.")
      expect(await resumed).toMatchObject({ threadId, resumed: true })
      const { turnId } = await second
      await until(store.subscribe, turnEnded(turnId), STEP_MS)
      expect(store.getSnapshot()?.turns.map((t) => t.status)).toEqual(["completed", "completed"])
      client.close()
    },
    STEP_MS * 2
  )
})
