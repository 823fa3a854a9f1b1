import type { RuntimeEvent, ThreadId } from "@planbridge/contracts"
import { afterAll, describe, expect, it } from "vitest"
import { PlanbridgeClient } from "../src/index.ts"
import {
  delta,
  dropConnections,
  ingest,
  serverSnapshot,
  start,
  started,
  tempDirs,
  until,
  Ws
} from "./support/realServer.ts"

/**
 * The client's resume guarantees against a real server: a stream of 2,000 events survives
 * dropped connections gap-free and without duplicates; a server that crashes and comes back is
 * resumed; a cursor from another database, or too far behind, is replaced by a snapshot.
 */
const dirs = tempDirs()
afterAll(() => dirs.removeAll())

const FAST = { initialMs: 10, maxMs: 100 }

/**
 * Writes to a data dir while the client's server is down: through a server of its own on
 * another port, which the client does not know, so everything written is missed live.
 */
const whileAway = async (dataDir: string, events: ReadonlyArray<RuntimeEvent>) => {
  const other = await start(dataDir)
  try {
    for (let i = 0; i < events.length; i += 500) await ingest(other, events.slice(i, i + 500))
  } finally {
    await other.close()
  }
}

const openAgain = (client: PlanbridgeClient) =>
  until(
    (listener) => client.onStatus(() => listener()),
    () => client.status === "open"
  )

/** Every event the client folded into `threadId`, in order (`onEvent` fires once per applied event). */
const recordEvents = (client: PlanbridgeClient, threadId: string) => {
  const seen: Array<string> = []
  client.onEvent((id, event) => {
    if (id === threadId) seen.push(event.eventId)
  })
  return seen
}

describe("@planbridge/client resume against a real server", () => {
  it("a 2,000-event stream with three dropped connections arrives gap-free, in order, without duplicates", async () => {
    const server = await start(dirs.make("stream"))
    const threadId = "thread-stream" as ThreadId
    const first = started(threadId)
    await ingest(server, [first])
    const client = await PlanbridgeClient.connect({
      url: server.url,
      token: server.token,
      WebSocket: Ws,
      backoff: FAST
    })
    try {
      const seen = recordEvents(client, threadId)
      const statuses: Array<string> = []
      client.onStatus((s) => statuses.push(s))
      const store = await client.follow(threadId, { fromStart: true })
      const sent: Array<RuntimeEvent> = [first]
      let drops = 0
      for (let batch = 0; batch < 20; batch++) {
        const events = Array.from({ length: 100 }, (_, i) => delta(threadId, `${batch}.${i} `))
        sent.push(...events)
        await ingest(server, events)
        // Mid-stream, while the server is still pushing this batch: the network fails.
        if (batch % 6 === 5) {
          await openAgain(client)
          drops += dropConnections(server)
          // Seen by the client before the next drop: else, under load, the next drop can find the
          // same dying socket (its close not yet delivered) and the client sees one drop, not two.
          await until(
            (listener) => client.onStatus(() => listener()),
            () => client.status === "reconnecting"
          )
        }
      }
      await until(store.subscribe, () => store.seq === 2_001, 60_000)
      expect(drops).toBe(3)
      expect(statuses.filter((s) => s === "reconnecting")).toHaveLength(3)
      expect(seen).toEqual(sent.map((e) => e.eventId))
      expect(new Set(seen).size).toBe(2_001)
      const expected = await serverSnapshot(server, threadId)
      expect(store.getSnapshot()?.seq).toBe(expected.seq)
      expect(store.getSnapshot()?.items).toEqual(expected.items)
    } finally {
      client.close()
      await server.close()
    }
  })

  it("a server that crashes (no close frame) and restarts on its port is resumed from afterSeq", async () => {
    const dataDir = dirs.make("crash")
    let server = await start(dataDir)
    const a = "thread-crash-a" as ThreadId
    const b = "thread-crash-b" as ThreadId
    await ingest(server, [started(a), started(b), ...Array.from({ length: 10 }, (_, i) => delta(a, `a${i}`))])
    const client = await PlanbridgeClient.connect({
      url: server.url,
      token: server.token,
      WebSocket: Ws,
      backoff: FAST
    })
    try {
      const storeA = await client.follow(a)
      const storeB = await client.follow(b)
      await until(storeA.subscribe, () => storeA.seq === 11)
      const seenA = recordEvents(client, a)

      // A crash: every socket dies without a close frame, then the process is gone for a while.
      const { port } = server
      dropConnections(server)
      await server.close()
      const during = Array.from({ length: 25 }, (_, i) => delta(a, `c${i}`))
      await whileAway(dataDir, [...during, delta(b, "b0")])
      server = await start(dataDir, { port })
      // Each start also closes the turn the crash left running (startup recovery): more events.
      const head = { a: (await serverSnapshot(server, a)).seq, b: (await serverSnapshot(server, b)).seq }
      expect(head.a).toBeGreaterThan(36)
      await until(storeA.subscribe, () => storeA.seq === head.a)
      await until(storeB.subscribe, () => storeB.seq === head.b)
      // Every event after the cursor exactly once, the ones written while away among them, in order.
      expect(seenA).toHaveLength(head.a - 11)
      expect(new Set(seenA).size).toBe(seenA.length)
      expect(seenA.filter((id) => during.some((e) => e.eventId === id))).toEqual(during.map((e) => e.eventId))
      expect(storeA.getSnapshot()?.items).toEqual((await serverSnapshot(server, a)).items)
      expect(client.status).toBe("open")
      // Live again after the resume.
      await ingest(server, [delta(a, "live")])
      await until(storeA.subscribe, () => storeA.seq === head.a + 1)
    } finally {
      client.close()
      await server.close()
    }
  })

  it("a cursor from another database (ahead of the thread) is replaced by the server's snapshot", async () => {
    let server = await start(dirs.make("stale-1"))
    const threadId = "thread-stale" as ThreadId
    await ingest(server, [started(threadId), ...Array.from({ length: 300 }, (_, i) => delta(threadId, `old${i} `))])
    const client = await PlanbridgeClient.connect({
      url: server.url,
      token: server.token,
      WebSocket: Ws,
      backoff: FAST
    })
    try {
      const store = await client.follow(threadId)
      await until(store.subscribe, () => store.seq === 301)
      // The data dir is replaced: the same thread id now has 11 other events.
      // The same token (PLANBRIDGE_TOKEN, say): a new data dir would otherwise have a new one, and 4401 ends the client.
      const { port, token } = server
      await server.close()
      const replaced = dirs.make("stale-2")
      await whileAway(replaced, [
        started(threadId),
        ...Array.from({ length: 10 }, (_, i) => delta(threadId, `new${i} `))
      ])
      server = await start(replaced, { port, token })
      const expected = await serverSnapshot(server, threadId)
      expect(expected.seq).toBeLessThan(301)
      await until(store.subscribe, () => store.seq === expected.seq)
      expect(store.getSnapshot()?.items).toEqual(expected.items)
      expect(JSON.stringify(store.getSnapshot())).not.toContain("old0")
      // And it follows on from there.
      await ingest(server, [delta(threadId, "next")])
      await until(store.subscribe, () => store.seq === expected.seq + 1)
    } finally {
      client.close()
      await server.close()
    }
  })

  it("a cursor more than 5,000 events behind gets a snapshot instead of the backlog", async () => {
    const dataDir = dirs.make("behind")
    let server = await start(dataDir)
    const threadId = "thread-behind" as ThreadId
    await ingest(server, [started(threadId), delta(threadId, "first ")])
    const client = await PlanbridgeClient.connect({
      url: server.url,
      token: server.token,
      WebSocket: Ws,
      backoff: FAST
    })
    try {
      const store = await client.follow(threadId)
      await until(store.subscribe, () => store.seq === 2)
      const seen = recordEvents(client, threadId)
      const { port } = server
      await server.close()
      await whileAway(
        dataDir,
        Array.from({ length: 5_500 }, (_, i) => delta(threadId, `${i} `))
      )
      server = await start(dataDir, { port })
      const head = (await serverSnapshot(server, threadId)).seq
      expect(head).toBeGreaterThan(5_502)
      await until(store.subscribe, () => store.seq === head, 60_000)
      // Folded from one snapshot, not 5,500 replayed events.
      expect(seen).toEqual([])
      expect(store.getSnapshot()?.items).toEqual((await serverSnapshot(server, threadId)).items)
    } finally {
      client.close()
      await server.close()
    }
  })
})
