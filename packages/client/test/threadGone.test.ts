import type { ThreadId } from "@planbridge/contracts"
import { afterAll, describe, expect, it } from "vitest"
import { PlanbridgeClient, type PlanbridgeError } from "../src/index.ts"
import { delta, ingest, serverSnapshot, start, started, tempDirs, until, Ws } from "./support/realServer.ts"

/**
 * A followed thread that the server no longer knows after a reconnect (its data dir was
 * replaced): the resubscribe's `unknown_thread` is a typed, observable outcome — the store says
 * the thread is gone, the app hears it once — instead of a store that silently stays stale.
 */
const dirs = tempDirs()
afterAll(() => dirs.removeAll())

const FAST = { initialMs: 10, maxMs: 100 }

describe("@planbridge/client: a followed thread gone after a reconnect", () => {
  it("reports unknown_thread on the store and to onThreadError, stops following it, keeps the others", async () => {
    let server = await start(dirs.make("gone-1"))
    const lost = "thread-lost" as ThreadId
    const kept = "thread-kept" as ThreadId
    await ingest(server, [started(lost), started(kept), delta(lost, "before the swap")])
    const client = await PlanbridgeClient.connect({
      url: server.url,
      token: server.token,
      WebSocket: Ws,
      backoff: FAST
    })
    try {
      const reported: Array<{ threadId: string; error: PlanbridgeError }> = []
      client.onThreadError((threadId, error) => reported.push({ threadId, error }))
      const lostStore = await client.follow(lost)
      const keptStore = await client.follow(kept)
      await until(lostStore.subscribe, () => lostStore.seq === 2)
      expect(lostStore.gone).toBeUndefined()

      // The data dir is replaced by one that has only the other thread; same port and token.
      const { port, token } = server
      await server.close()
      const replaced = dirs.make("gone-2")
      const other = await start(replaced)
      await ingest(other, [started(kept), delta(kept, "in the new dir")])
      await other.close()
      server = await start(replaced, { port, token })

      await until(lostStore.subscribe, () => lostStore.gone !== undefined)
      expect(lostStore.gone?.code).toBe("unknown_thread")
      expect(reported.map((r) => [r.threadId, r.error.code])).toEqual([[lost, "unknown_thread"]])
      // What it showed stays readable; the connection is fine.
      expect(lostStore.getSnapshot()?.items.map((i) => i.text)).toEqual(["before the swap"])
      expect(client.status).toBe("open")

      // The other thread follows on in the new data dir.
      const expected = await serverSnapshot(server, kept)
      await until(keptStore.subscribe, () => keptStore.seq === expected.seq)
      expect(keptStore.gone).toBeUndefined()
      await ingest(server, [delta(kept, "live")])
      await until(keptStore.subscribe, () => keptStore.seq === expected.seq + 1)

      // Not followed any more: a follow asks the server again (and is refused), with a new store.
      await expect(client.follow(lost)).rejects.toMatchObject({ code: "unknown_thread" })
      // No further report for the gone thread after more reconnects.
      const { port: p2 } = server
      await server.close()
      server = await start(replaced, { port: p2, token })
      await ingest(server, [delta(kept, "after another restart")])
      await until(keptStore.subscribe, () => keptStore.seq === expected.seq + 2)
      expect(reported).toHaveLength(1)
    } finally {
      client.close()
      await server.close()
    }
  })
})
