import {
  ThreadHistoryPage,
  ThreadState,
  TURN_WINDOW,
  type RuntimeEvent,
  type ServerFrame,
  type ThreadSnapshot
} from "@planbridge/contracts"
import { Effect, Schema } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { startServer, type RunningServer } from "../../src/http/HttpServer.ts"
import { RuntimeIngestion } from "../../src/orchestration/RuntimeIngestion.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { ENGINES, freshStore } from "../support/storeEngines.ts"
import { connect } from "../support/wsClient.ts"

// `thread.subscribe`'s snapshot window and `thread.history` over the WebSocket, on both engines:
// a client that takes the window, follows the live stream and pages back to the start ends
// with exactly the server's whole thread; bad requests get typed errors.

const dirs: Array<string> = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

const decodePage = Schema.decodeUnknownSync(ThreadHistoryPage)

const start = async (engine: (typeof ENGINES)[number]) => {
  const dir = mkdtempSync(join(tmpdir(), "planbridge-history-"))
  dirs.push(dir)
  const { storeUrl } = await freshStore(engine)
  return startServer({
    dataDir: dir,
    host: "127.0.0.1",
    port: 0,
    logLevel: "silent",
    providers: [],
    ...(storeUrl === undefined ? {} : { store: storeUrl })
  })
}

const ingest = (server: RunningServer, events: ReadonlyArray<RuntimeEvent>) =>
  server.runtime.runPromise(
    Effect.gen(function* () {
      return yield* (yield* RuntimeIngestion).ingestAll(events)
    })
  )

const wholeThread = async (server: RunningServer, threadId: string): Promise<ThreadSnapshot> => {
  const res = await fetch(`${server.url}/api/threads/${threadId}`, {
    headers: { authorization: `Bearer ${server.token}` }
  })
  expect(res.status).toBe(200)
  return (await res.json()) as ThreadSnapshot
}

describe.each(ENGINES)("snapshot window and thread.history over the WebSocket on %s", (engine) => {
  it("window, live events and every page back fold to the server's whole thread", async () => {
    const server = await start(engine)
    try {
      const events = generateEventMix({ seed: 71, count: 2_000, threads: 1, prefix: "hist", approvals: true })
      const threadId = events[0]!.threadId
      await ingest(server, events.slice(0, 1_500))
      const whole = await wholeThread(server, threadId)
      expect(whole.turns.length).toBeGreaterThan(12)

      const client = await connect({ url: server.url, token: server.token })
      let state: ThreadState | undefined
      client.socket.on("message", (data) => {
        const frame = JSON.parse(String(data)) as ServerFrame
        if (frame.type === "snapshot") state = ThreadState.fromSnapshot(frame.snapshot)
        if (frame.type === "event") state!.apply(frame.seq, frame.event)
      })
      expect((await client.command({ type: "thread.subscribe", threadId, window: 4 })).type).toBe("result")
      const snapshot = client.frames.find((f) => f.type === "snapshot")!.snapshot
      expect(snapshot.turns.map((t) => t.turnId)).toEqual(whole.turns.slice(-4).map((t) => t.turnId))
      expect(snapshot.olderTurns).toEqual({ before: whole.turns.at(-4)!.turnId })

      // The thread goes on while the client pages back, a page at a time.
      const rest = events.slice(1_500)
      let pages = 0
      while (state!.olderTurns !== null) {
        if (rest.length > 0) await ingest(server, rest.splice(0, 100))
        const reply = await client.command({
          type: "thread.history",
          threadId,
          before: state!.olderTurns.before,
          limit: 3
        })
        if (reply.type !== "result") throw new Error(reply.error.message)
        const page = decodePage(reply.result)
        expect(page.turns.length).toBeLessThanOrEqual(3)
        state!.addOlder(page)
        pages++
      }
      expect(pages).toBe(Math.ceil((whole.turns.length - 4) / 3))
      if (rest.length > 0) await ingest(server, rest)
      const final = await wholeThread(server, threadId)
      await client.waitFor((f): f is ServerFrame => f.type === "event" && f.seq === final.seq)
      expect(state!.toSnapshot()).toEqual(final)
      await client.close()
    } finally {
      await server.close()
    }
  }, 120_000)

  it("typed errors: unknown thread, a cursor that is not the thread's turn, bounds, no token", async () => {
    const server = await start(engine)
    try {
      const events = generateEventMix({ seed: 72, count: 600, threads: 2, prefix: "bad" })
      await ingest(server, events)
      const [a, b] = [...new Set(events.map((e) => e.threadId))]
      const turnOfB = (await wholeThread(server, b!)).turns[0]!.turnId
      const client = await connect({ url: server.url, token: server.token })
      const unknown = await client.command({ type: "thread.history", threadId: "nope" as never, before: turnOfB })
      expect(unknown).toMatchObject({ type: "error", error: { code: "unknown_thread" } })
      const foreign = await client.command({ type: "thread.history", threadId: a!, before: turnOfB })
      expect(foreign).toMatchObject({ type: "error", error: { code: "invalid_cursor", path: ["command", "before"] } })
      const history = (limit: number) =>
        JSON.stringify({
          type: "command",
          id: `l${limit}`,
          command: { type: "thread.history", threadId: a, before: turnOfB, limit }
        })
      const subscribe = (window: number) =>
        JSON.stringify({
          type: "command",
          id: `w${window}`,
          command: { type: "thread.subscribe", threadId: a, window }
        })
      for (const [text, id] of [
        [history(0), "l0"],
        [history(TURN_WINDOW.max + 1), `l${TURN_WINDOW.max + 1}`],
        [subscribe(0), "w0"],
        [subscribe(TURN_WINDOW.max + 1), `w${TURN_WINDOW.max + 1}`]
      ] as const) {
        client.sendRaw(text)
        const error = await client.waitFor(
          (f): f is ServerFrame & { type: "error" } => f.type === "error" && f.id === id
        )
        expect(error.error.code).toBe("invalid_frame")
        expect(error.error.message).toMatch(/between 1 and 200\n  at \["command"\]\["(limit|window)"\]/)
      }
      await client.close()

      // Like every command: nothing before a hello with the token.
      const stranger = await connect({ url: server.url, hello: false })
      const refused = await stranger.command({ type: "thread.history", threadId: a!, before: turnOfB })
      expect(refused).toMatchObject({ type: "error", error: { code: "unauthorized" } })
      await stranger.close()
    } finally {
      await server.close()
    }
  }, 120_000)
})
