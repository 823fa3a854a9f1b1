import type { ThreadId } from "@planbridge/contracts"
import { Effect } from "effect"
import { rmSync } from "node:fs"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { WebSocketServer } from "ws"
import type { RunningServer } from "../../src/http/HttpServer.ts"
import type { StoredEvent } from "../../src/persistence/EventStore.ts"
import { StoreError, StoreReadFailed } from "../../src/persistence/StoreError.ts"
import { authenticationBy } from "../../src/server/Authentication.ts"
import { serveConnection, THREAD_FEED_FAILED, THREAD_LIST_FAILED } from "../../src/ws/Connection.ts"
import { liveRunsOf } from "../../src/ws/EventFrames.ts"
import type { FeedReads } from "../../src/ws/ThreadFeed.ts"
import type { ThreadHubService, ThreadListener } from "../../src/ws/ThreadHub.ts"
import type { ThreadListReads } from "../../src/ws/ThreadListFeed.ts"
import { generateEventMix } from "../support/eventMix.ts"
import { startLoggedServer } from "../support/logCapture.ts"
import { connect, type TestClient } from "../support/wsClient.ts"

/**
 * A connection's feeds run as fibers of the server's runtime (ws/FeedFiber.ts): a step that fails
 * with nobody waiting for it is logged through the server's logger and ends the connection with
 * close code 1011 and its reason, never silently; and closing the socket interrupts the feed's
 * fiber, with the step it is in. The connection is served over the server's own runtime and
 * logger, on a store whose reads the test decides.
 */
const threadId = "thr-feed-fiber" as ThreadId
const stored: Array<StoredEvent> = generateEventMix({ seed: 11, count: 60, threads: 1 }).map((event, i) => ({
  seq: i + 1,
  threadSeq: i + 1,
  event: { ...event, threadId }
}))
const toJson = (s: StoredEvent) => ({ threadSeq: s.threadSeq, eventJson: JSON.stringify(s.event) })
const readFailed = () =>
  new StoreError({ reason: new StoreReadFailed({ operation: "read a thread", cause: new Error("disk I/O error") }) })

/** The hub connections follow through, driven by the test; it counts who still listens. */
const testHub = () => {
  const byThread = new Set<ThreadListener>()
  const everyThread = new Set<ThreadListener>()
  const hub: ThreadHubService = {
    listen: (_threadId, listener) => {
      byThread.add(listener)
      return () => void byThread.delete(listener)
    },
    listenAll: (listener) => {
      everyThread.add(listener)
      return () => void everyThread.delete(listener)
    },
    listenListChanges: () => () => undefined,
    listChanged: () => undefined
  }
  const publish = (events: ReadonlyArray<StoredEvent>) => {
    for (const run of liveRunsOf(events)) for (const listener of [...everyThread, ...byThread]) listener(run)
  }
  return { hub, publish, listeners: () => byThread.size + everyThread.size }
}

const readsOf = (events: Partial<FeedReads["events"]>): FeedReads => ({
  events: {
    readThreadJson: (_thread, after, limit) =>
      Effect.succeed(stored.slice(after, Math.min(3, after + limit)).map(toJson)),
    threadHead: () => Effect.succeed(3),
    ...events
  },
  threads: { snapshotJson: () => Effect.die("no snapshot in this test") }
})

const listOf = (threads: Partial<ThreadListReads["threads"]>): ThreadListReads => ({
  threads: {
    snapshotJson: () => Effect.die("no snapshot in this test"),
    list: () => Effect.succeed([]),
    summary: () => Effect.die("no summary in this test"),
    setArchived: () => Effect.die("no archive in this test"),
    ...threads
  },
  isLive: () => false
})

let server: RunningServer | undefined
let sockets: WebSocketServer | undefined
let dir: string | undefined
afterEach(async () => {
  await new Promise((resolve) => (sockets === undefined ? resolve(undefined) : sockets.close(resolve)))
  await server?.close()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  server = sockets = dir = undefined
})

/** Serves connections with the server's runtime and logger over `reads`; a client connected to it. */
const serve = async (reads: FeedReads, threadList: ThreadListReads) => {
  const started = await startLoggedServer("feed-fiber", { logLevel: "info" })
  ;({ server, dir } = started)
  const log = started.log
  const { hub, publish, listeners } = testHub()
  const runtime = server.runtime
  const auth = authenticationBy(server.token)
  /** What the connection logs itself (a command's failure). */
  const connectionLog: Array<string> = []
  sockets = new WebSocketServer({ host: "127.0.0.1", port: 0, path: "/ws", perMessageDeflate: false })
  sockets.on("connection", (socket, req) =>
    serveConnection(socket, {
      runtime,
      reads,
      threadList,
      auth,
      preAuthenticated: true,
      providers: () => [],
      maxFrameBytes: 256 * 1024,
      maxBufferedBytes: 16 * 1024 * 1024,
      helloTimeoutMs: 10_000,
      hub,
      stream: req.socket,
      log: { error: (_details, message) => void connectionLog.push(message) }
    })
  )
  await new Promise((resolve) => sockets!.once("listening", resolve))
  const { port } = sockets.address() as AddressInfo
  const client = await connect({ url: `http://127.0.0.1:${port}`, token: server.token })
  return { client, log, publish, listeners, connectionLog }
}

const closeOf = (client: TestClient) =>
  new Promise<{ code: number; reason: string }>((resolve) =>
    client.socket.once("close", (code, reason) => resolve({ code, reason: String(reason) }))
  )

describe("a connection's feed fibers", () => {
  it("a failed catch-up is logged by the server's logger and closes the connection with 1011 and its reason", async () => {
    let reads = 0
    const { client, log, publish } = await serve(
      readsOf({
        // The subscription's backlog read succeeds; the catch-up after a gap fails.
        readThreadJson: (_thread, after, limit) =>
          ++reads === 1
            ? Effect.succeed(stored.slice(after, Math.min(3, after + limit)).map(toJson))
            : Effect.fail(readFailed())
      }),
      listOf({})
    )
    const subscribed = await client.command({ type: "thread.subscribe", threadId, afterSeq: 0 })
    expect(subscribed).toMatchObject({ type: "result", result: { subscribed: true } })
    const closed = closeOf(client)
    // Events 4 and 5 never published: the run of 6 shows a gap, which only the log can fill.
    publish(stored.slice(5, 6))
    expect(await closed).toEqual({ code: 1011, reason: THREAD_FEED_FAILED })
    await log.until((lines) => lines.some((line) => line.msg?.startsWith("catching a thread up failed") === true))
    const line = log.parsed().find((l) => l.msg?.startsWith("catching a thread up failed"))
    expect(line).toMatchObject({ level: 50 })
    expect(String(line?.cause)).toContain("disk I/O error")
    expect(client.frames.filter((f) => f.type === "event").map((f) => f.type === "event" && f.seq)).toEqual([1, 2, 3])
  })

  it("a failed re-read of a thread's list entry closes the connection with 1011, not a list gone stale", async () => {
    const { client, log, publish } = await serve(readsOf({}), listOf({ summary: () => Effect.fail(readFailed()) }))
    expect(await client.command({ type: "threads.subscribe" })).toMatchObject({ type: "result" })
    const closed = closeOf(client)
    const turnStarted = stored.find((s) => s.event.type === "turn.started")!
    publish([turnStarted])
    expect(await closed).toEqual({ code: 1011, reason: THREAD_LIST_FAILED })
    await log.until((lines) =>
      lines.some((line) => line.msg?.startsWith("reading a thread's list entry failed") === true && line.level === 50)
    )
  })

  it("closing the socket interrupts the feed's fiber in the step it is in, and the waiting command quietly", async () => {
    let readStarted!: () => void
    const started = new Promise<void>((resolve) => (readStarted = resolve))
    let readInterrupted!: () => void
    const interrupted = new Promise<void>((resolve) => (readInterrupted = resolve))
    const { client, listeners, connectionLog, log } = await serve(
      readsOf({
        // A read that never answers (a store that hangs): only the fiber's interruption ends it.
        threadHead: () =>
          Effect.sync(readStarted).pipe(
            Effect.andThen(Effect.never),
            Effect.onInterrupt(() => Effect.sync(readInterrupted))
          )
      }),
      listOf({})
    )
    expect(await client.command({ type: "threads.subscribe" })).toMatchObject({ type: "result" })
    client.socket.send(
      JSON.stringify({ type: "command", id: "s1", command: { type: "thread.subscribe", threadId, afterSeq: 0 } })
    )
    await started
    expect(listeners()).toBe(2)
    await client.close()
    await interrupted
    expect(listeners()).toBe(0)
    // Nothing failed: no command error, no feed failure in either log.
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(connectionLog).toEqual([])
    expect(log.parsed().filter((line) => line.level >= 50)).toEqual([])
  })
})
