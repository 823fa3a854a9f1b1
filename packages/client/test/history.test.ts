import type { ThreadId } from "@planbridge/contracts"
import { afterAll, describe, expect, it } from "vitest"
import { generateEventMix } from "../../../apps/server/test/support/eventMix.ts"
import { PlanbridgeClient } from "../src/index.ts"
import { ingest, serverSnapshot, start, tempDirs, until, Ws } from "./support/realServer.ts"

/**
 * The client library's snapshot window and `loadOlderTurns` against a real server (SQLite,
 * WebSocket) in this process: a store starts with the latest turns, pages back to the thread's
 * start while the thread goes on, and ends equal to the server's whole thread.
 */
const dirs = tempDirs()
afterAll(() => dirs.removeAll())

describe("@planbridge/client: snapshot window and older turns", () => {
  it("follow with a window, loadOlderTurns to the start while events stream: the store equals the whole thread", async () => {
    const server = await start(dirs.make("history"))
    try {
      const events = generateEventMix({ seed: 81, count: 1_600, threads: 1, prefix: "client-hist", approvals: true })
      const threadId = events[0]!.threadId as ThreadId
      await ingest(server, events.slice(0, 1_200))
      const whole = await serverSnapshot(server, threadId)
      const client = await PlanbridgeClient.connect({ url: server.url, token: server.token, WebSocket: Ws })
      await expect(client.loadOlderTurns(threadId)).rejects.toMatchObject({ code: "unknown_thread" })
      const store = await client.follow(threadId, { window: 3 })
      await until(store.subscribe, () => store.ready)
      expect(store.getSnapshot()!.turns.map((t) => t.turnId)).toEqual(whole.turns.slice(-3).map((t) => t.turnId))
      expect(store.olderTurns).toEqual({ before: whole.turns.at(-3)!.turnId })

      const rest = events.slice(1_200)
      let pages = 0
      while (store.olderTurns !== null) {
        if (rest.length > 0) await ingest(server, rest.splice(0, 50))
        // A UI that asks twice at once gets the same page, loaded once.
        const [page, again] = await Promise.all([
          client.loadOlderTurns(threadId, 4),
          client.loadOlderTurns(threadId, 4)
        ])
        expect(again).toBe(page)
        expect(page!.turns.length).toBeGreaterThan(0)
        pages++
      }
      expect(pages).toBe(Math.ceil((whole.turns.length - 3) / 4))
      expect(await client.loadOlderTurns(threadId)).toBeUndefined()
      if (rest.length > 0) await ingest(server, rest)
      const final = await serverSnapshot(server, threadId)
      await until(store.subscribe, () => store.seq === final.seq)
      expect(store.getSnapshot()).toEqual(final)
      client.close()
    } finally {
      await server.close()
    }
  }, 120_000)
})
