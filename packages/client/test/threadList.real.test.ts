import type { ThreadId } from "@planbridge/contracts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PlanbridgeClient } from "../src/index.ts"
import { startDemoServer, type DemoServer } from "./support/demoServer.ts"
import { dropConnections, until, Ws } from "./support/realServer.ts"

/**
 * `followThreadList` (issue 27, item 7) against the real server in demo mode (the real Codex
 * app-server, its model scripted): another client's thread and its question reach this client's
 * list and inbox without following the thread, leave once answered, and the list stays live
 * across a dropped connection.
 */
const STEP_MS = 120_000
let rig: DemoServer
beforeAll(async () => {
  rig = await startDemoServer()
}, STEP_MS)
afterAll(async () => rig?.close())

const connect = () =>
  PlanbridgeClient.connect({
    url: rig.server.url,
    token: rig.server.token,
    WebSocket: Ws,
    backoff: { initialMs: 20, maxMs: 200 }
  })

describe("followThreadList", () => {
  it(
    "fills with threads and questions from other clients, live and across a reconnect",
    async () => {
      const watcher = await connect()
      const other = await connect()
      const list = await watcher.followThreadList()
      expect(list.getSnapshot()).toEqual([])
      expect(await watcher.followThreadList()).toBe(list)

      const { threadId } = await other.startSession("codex", rig.cwd, "plan")
      await until(list.subscribe, () => list.getSnapshot().some((e) => e.thread.threadId === threadId), STEP_MS)
      await other.startTurn(threadId, "Ask me questions, then plan.")
      // The watcher follows no thread: its inbox fills from the list.
      await until(watcher.inbox.subscribe, () => watcher.inbox.getSnapshot().length === 1, STEP_MS)
      const [entry] = watcher.inbox.getSnapshot()
      if (entry?.kind !== "prompt") throw new Error(`expected a prompt, got ${JSON.stringify(entry)}`)
      expect(entry.threadId).toBe(threadId)

      await other.respond(
        entry.prompt.promptId,
        entry.prompt.prompt.questions.map((q) => ({ questionId: q.id, text: "fine" }))
      )
      await until(watcher.inbox.subscribe, () => watcher.inbox.getSnapshot().length === 0, STEP_MS)

      // Dropped: the client subscribes again by itself; a thread started meanwhile shows up.
      const statuses: Array<string> = []
      watcher.onStatus((s) => statuses.push(s))
      const otherStatuses: Array<string> = []
      other.onStatus((s) => otherStatuses.push(s))
      expect(dropConnections(rig.server)).toBeGreaterThan(0)
      // session.start is not resent after a drop: start it once the other client is back.
      await until(
        (listener) => other.onStatus(listener),
        () => otherStatuses.includes("reconnecting") && other.status === "open",
        STEP_MS
      )
      const second = await other.startSession("codex", rig.cwd, "default")
      await until(
        list.subscribe,
        () => list.getSnapshot().some((e) => e.thread.threadId === (second.threadId as ThreadId)),
        STEP_MS
      )
      expect(statuses).toContain("reconnecting")
      expect(list.getSnapshot().map((e) => e.thread.threadId)).toEqual(
        expect.arrayContaining([threadId, second.threadId])
      )
      watcher.close()
      other.close()
    },
    STEP_MS * 2
  )
})
