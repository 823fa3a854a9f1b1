import { ThreadState, type RuntimeEvent, type ServerFrame, type ThreadSnapshot } from "@planbridge/contracts"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { startServer, type RunningServer } from "../../src/http/HttpServer.ts"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { generateEventMix, prng } from "../support/eventMix.ts"
import { ENGINES, freshStore } from "../support/storeEngines.ts"
import { connect, type TestClient } from "../support/wsClient.ts"

const dirs: Array<string> = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

/** A server on the data dir, its log in `store` (a PostgreSQL URL) or else SQLite in the data dir. */
const start = (dataDir: string, store: string | undefined) =>
  startServer({
    dataDir,
    host: "127.0.0.1",
    port: 0,
    logLevel: "silent",
    providers: [],
    ...(store === undefined ? {} : { store })
  })

const ingest = (server: RunningServer, events: ReadonlyArray<RuntimeEvent>) =>
  server.runtime.runPromise(
    Effect.gen(function* () {
      return yield* (yield* RuntimeIngestion).ingestAll(events)
    })
  )

const serverSnapshot = async (server: RunningServer, threadId: string): Promise<ThreadSnapshot> => {
  const res = await fetch(`${server.url}/api/threads/${threadId}`, {
    headers: { authorization: `Bearer ${server.token}` }
  })
  expect(res.status).toBe(200)
  return (await res.json()) as ThreadSnapshot
}

/**
 * A client that folds what it receives and, at random points, drops the connection and
 * resumes from the last sequence it applied. A gap or a repeat throws inside the fold.
 */
class FoldingClient {
  static drops = 0
  /** Snapshots received on connections that resumed with a cursor: must stay 0. */
  static snapshotsOnResume = 0
  state: ThreadState | undefined
  client: TestClient | undefined
  received = 0
  constructor(readonly threadId: string) {}

  async connect(server: RunningServer, dropAfterFrames: number | undefined): Promise<void> {
    const client = await connect({ url: server.url, token: server.token })
    this.client = client
    const resuming = this.state !== undefined
    client.socket.on("message", (data) => {
      const frame = JSON.parse(String(data)) as ServerFrame
      if (frame.type === "snapshot" && frame.threadId === this.threadId) {
        if (resuming) FoldingClient.snapshotsOnResume++
        this.state = ThreadState.fromSnapshot(frame.snapshot)
      }
      if (frame.type === "event" && frame.threadId === this.threadId) {
        if (this.state === undefined) throw new Error("event before snapshot")
        this.state.apply(frame.seq, frame.event)
        this.received++
        if (
          dropAfterFrames !== undefined &&
          this.received >= dropAfterFrames &&
          client.socket.readyState === client.socket.OPEN
        ) {
          FoldingClient.drops++
          client.socket.terminate()
        }
      }
    })
    const afterSeq = this.state?.seq
    // The drop may happen during the catch-up itself, before the subscribe result arrives.
    const dropped = new Promise<undefined>((resolve) => client.socket.once("close", () => resolve(undefined)))
    const reply = await Promise.race([
      client
        .command({
          type: "thread.subscribe",
          threadId: this.threadId as never,
          ...(afterSeq === undefined ? {} : { afterSeq })
        })
        .catch(() => undefined),
      dropped
    ])
    if (reply?.type === "error") throw new Error(reply.error.message)
  }

  async waitUntil(seq: number): Promise<void> {
    const deadline = Date.now() + 10_000
    while ((this.state?.seq ?? 0) < seq) {
      if (Date.now() > deadline) throw new Error(`client stuck at ${this.state?.seq} < ${seq}`)
      await new Promise((r) => setTimeout(r, 2))
    }
  }
}

describe.each(ENGINES)("reconnect on %s", (engine) => {
  it("a client dropped at random points of a long stream and resumed with afterSeq ends equal to the server's snapshot (120 runs)", async () => {
    FoldingClient.drops = 0
    FoldingClient.snapshotsOnResume = 0
    const dir = mkdtempSync(join(tmpdir(), "planbridge-reconnect-"))
    dirs.push(dir)
    const { storeUrl } = await freshStore(engine)
    const server = await start(dir, storeUrl)
    try {
      for (let run = 0; run < 120; run++) {
        const r = prng(1000 + run)
        const events = generateEventMix({ seed: 1000 + run, count: 150 + r.int(250), threads: 1, prefix: `run${run}` })
        const threadId = events[0]!.threadId
        // The thread exists before the client first subscribes (it gets a snapshot, maybe mid-stream).
        const head = 1 + r.int(40)
        await ingest(server, events.slice(0, head))
        const folding = new FoldingClient(threadId)
        let next = head
        let receipts = 0
        while (next < events.length) {
          const drop = r.next() < 0.7 ? 1 + r.int(60) : undefined
          await folding.connect(server, drop)
          // Produce while connected, in random batch sizes, until the socket drops or the stream ends.
          while (next < events.length && folding.client!.socket.readyState === folding.client!.socket.OPEN) {
            const size = 1 + r.int(25)
            receipts = (await ingest(server, events.slice(next, next + size))).at(-1)!.threadSeq
            next += size
            if (r.next() < 0.3) await new Promise((res) => setImmediate(res))
          }
          await folding.client!.close()
        }
        await folding.connect(server, undefined)
        await folding.waitUntil(receipts)
        expect(folding.state!.toSnapshot()).toEqual(await serverSnapshot(server, threadId))
        await folding.client!.close()
      }
      // The runs really dropped connections mid-stream (often during catch-up itself).
      expect(FoldingClient.drops).toBeGreaterThan(150)
      // A resume within reach of the log is served from the log alone, never a snapshot.
      expect(FoldingClient.snapshotsOnResume).toBe(0)
    } finally {
      await server.close()
    }
  })

  it("a cursor too old or from the future gets a snapshot first, then only newer events", async () => {
    const dir = mkdtempSync(join(tmpdir(), "planbridge-cursor-"))
    dirs.push(dir)
    const { storeUrl } = await freshStore(engine)
    const server = await start(dir, storeUrl)
    try {
      const events = generateEventMix({ seed: 3000, count: 6_000, threads: 1, prefix: "cursor" })
      const threadId = events[0]!.threadId
      for (let i = 0; i < events.length; i += 1_000) await ingest(server, events.slice(i, i + 1_000))
      const last = (await serverSnapshot(server, threadId)).seq
      for (const afterSeq of [1, last + 50]) {
        const client = await connect({ url: server.url, token: server.token })
        const reply = await client.command({ type: "thread.subscribe", threadId: threadId as never, afterSeq })
        expect(reply.type).toBe("result")
        const kinds = client.frames.filter((f) => f.type === "snapshot" || f.type === "event").map((f) => f.type)
        expect(kinds).toEqual(["snapshot"])
        await client.close()
      }
      const near = await connect({ url: server.url, token: server.token })
      await near.command({ type: "thread.subscribe", threadId: threadId as never, afterSeq: last - 10 })
      expect(near.frames.filter((f) => f.type === "snapshot")).toHaveLength(0)
      expect(near.frames.flatMap((f) => (f.type === "event" ? [f.seq] : []))).toEqual(
        Array.from({ length: 10 }, (_, i) => last - 9 + i)
      )
      await near.close()
    } finally {
      await server.close()
    }
  })

  it("a server restart between disconnect and resume: the client catches up, and pending prompts show server_restarted", async () => {
    const dir = mkdtempSync(join(tmpdir(), "planbridge-restart-"))
    dirs.push(dir)
    const { storeUrl } = await freshStore(engine)
    let server = await start(dir, storeUrl)
    try {
      for (let run = 0; run < 6; run++) {
        const events = generateEventMix({ seed: 2000 + run, count: 400, threads: 1, prefix: `restart${run}` })
        const threadId = events[0]!.threadId
        await ingest(server, events.slice(0, 200))
        const folding = new FoldingClient(threadId)
        await folding.connect(server, 120)
        await ingest(server, events.slice(200))
        await folding.client!.close()
        const before = await serverSnapshot(server, threadId)
        const pendingBefore = before.prompts.filter((p) => p.status === "pending").length
        await server.close()
        server = await start(dir, storeUrl)
        expect(server.recovery.prompts).toBeGreaterThanOrEqual(pendingBefore)
        await folding.connect(server, undefined)
        const after = await serverSnapshot(server, threadId)
        await folding.waitUntil(after.seq)
        expect(folding.state!.toSnapshot()).toEqual(after)
        expect(after.prompts.filter((p) => p.status === "pending")).toEqual([])
        expect(after.prompts.filter((p) => p.resolution === "server_restarted")).toHaveLength(pendingBefore)
        expect(after.state).toBe("stopped")
        await folding.client!.close()
      }
    } finally {
      await server.close()
    }
  })
})
