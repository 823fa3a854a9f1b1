import type { Command, PromptId, ThreadId, TurnId } from "@planbridge/contracts"
import { afterAll, afterEach, describe, expect, it, vi } from "vitest"
import WebSocket from "ws"
import type { RunningServer } from "../../../apps/server/src/http/HttpServer.ts"
import { PlanbridgeClient, PlanbridgeError, type WebSocketConstructor } from "../src/index.ts"
import { delta, dropConnections, ingest, start, started, tempDirs, until, Ws } from "./support/realServer.ts"

/**
 * The client's connection against a real `planbridge` server: which commands in flight when the
 * connection drops are sent again and which fail `disconnected`; the backoff before a reconnect
 * (growing while the server is away, from the start again after a `welcome`); a token refused
 * after a restart (4401) and `close()` ending the client; no WebSocket implementation.
 * The jitter is pinned (`Math.random` → 0.5) where a test measures a delay.
 */
const dirs = tempDirs()
afterAll(() => dirs.removeAll())
afterEach(() => {
  vi.restoreAllMocks()
  vi.unstubAllGlobals()
})

/** `ws`, recording each socket the client creates (its connection attempts) and when. */
const recordAttempts = () => {
  const sockets: Array<WebSocket> = []
  const times: Array<number> = []
  const listeners = new Set<() => void>()
  const Ctor = class extends WebSocket {
    constructor(url: string) {
      super(url)
      sockets.push(this)
      times.push(performance.now())
      for (const listener of [...listeners]) listener()
    }
  } as unknown as WebSocketConstructor
  /** Resolves once `count` sockets were created. */
  const reach = (count: number) =>
    until(
      (listener) => {
        listeners.add(listener)
        return () => listeners.delete(listener)
      },
      () => sockets.length >= count
    )
  return { Ctor, sockets, times, reach }
}

/** Resolves with the code and reason of the next client connection's close, as the server saw it. */
const nextServerSideClose = (server: RunningServer) =>
  new Promise<{ readonly code: number; readonly reason: string }>((resolve) => {
    const [socket] = server.app.websocketServer.clients
    if (socket === undefined) throw new Error("no client connected")
    socket.once("close", (code: number, reason: Buffer) => resolve({ code, reason: String(reason) }))
  })

const statusOf = (client: PlanbridgeClient, wanted: string) =>
  until(
    (listener) => client.onStatus(() => listener()),
    () => client.status === wanted
  )

const failure = (promise: Promise<unknown>) =>
  promise.then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`)
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(PlanbridgeError)
      return error as PlanbridgeError
    }
  )

/** A command's result, or its error's code and message. */
const settled = (promise: Promise<unknown>) =>
  promise.then(
    (result) => ({ result }),
    (error: PlanbridgeError) => ({ code: error.code, message: error.message })
  )

describe("commands in flight when the connection drops", () => {
  it("reads (list, history), resume, (un)subscribes and answers with a clientRequestId go again; the rest fail disconnected", async () => {
    const server = await start(dirs.make("inflight"))
    const threadId = "thread-inflight" as ThreadId
    await ingest(server, [started(threadId)])
    const client = await PlanbridgeClient.connect({
      url: server.url,
      token: server.token,
      WebSocket: Ws,
      backoff: { initialMs: 10, maxMs: 100 }
    })
    try {
      const list = client.listThreads()
      const follow = client.follow(threadId)
      // Each is answered by the server (a result or a typed error), the same as when sent afresh below.
      const resendable: Array<Command> = [
        { type: "thread.resume", threadId },
        { type: "thread.history", threadId, before: "turn-unknown" as TurnId },
        { type: "thread.unsubscribe", threadId: "thread-other" as ThreadId },
        { type: "userInput.respond", promptId: "prompt-unknown" as PromptId, answers: [], clientRequestId: "inflight" }
      ]
      const resent = resendable.map((command) => settled(client.command(command)))
      const notResent = [
        client.startTurn(threadId, "hello"),
        client.setMode(threadId, "plan"),
        client.interrupt(threadId),
        client.startSession("codex", dirs.make("cwd"), "plan")
      ].map(failure)
      // In the same tick as the sends: the server never reads them, and no answer can come back.
      expect(dropConnections(server)).toBe(1)

      for (const error of await Promise.all(notResent)) {
        expect(error.code).toBe("disconnected")
        expect(error.message).toMatch(
          /^the connection dropped \(1006\) before (turn\.start|mode\.set|turn\.interrupt|session\.start) was answered$/
        )
      }
      // The resent ones are answered by the server, as the same commands sent now are.
      expect((await list).map((t) => t.threadId)).toContain(threadId)
      const store = await follow
      await until(store.subscribe, () => store.ready)
      expect(store.seq).toBe(1)
      const answers = await Promise.all(resent)
      for (const answer of answers) expect(answer).not.toMatchObject({ code: "disconnected" })
      const afresh = await Promise.all(
        resendable.map((command) =>
          settled(client.command("clientRequestId" in command ? { ...command, clientRequestId: "afresh" } : command))
        )
      )
      expect(answers).toEqual(afresh)
    } finally {
      client.close()
      await server.close()
    }
  })

  it("a command made while reconnecting waits for the welcome and is sent then, whatever its kind", async () => {
    const server = await start(dirs.make("queued"))
    const client = await PlanbridgeClient.connect({
      url: server.url,
      token: server.token,
      WebSocket: Ws,
      backoff: { initialMs: 10, maxMs: 100 }
    })
    try {
      dropConnections(server)
      await statusOf(client, "reconnecting")
      // Not safe to resend, but never sent yet: it goes once the connection is back.
      const turn = failure(client.startTurn("thread-nowhere" as ThreadId, "hello"))
      expect(client.status).toBe("reconnecting")
      const error = await turn
      expect(error.code).not.toBe("disconnected")
      expect(client.status).toBe("open")
      expect(error.code).toBe((await failure(client.startTurn("thread-nowhere" as ThreadId, "again"))).code)
    } finally {
      client.close()
      await server.close()
    }
  })
})

describe("reconnect backoff", () => {
  it("waits its delay before each attempt, doubling while the server is away, from the first again after a welcome", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0.5)
    // With the jitter pinned at half, attempt n waits 100 · 2^n ms.
    const backoff = { initialMs: 200, maxMs: 60_000 }
    const dataDir = dirs.make("backoff")
    let server = await start(dataDir)
    const attempts = recordAttempts()
    const client = await PlanbridgeClient.connect({
      url: server.url,
      token: server.token,
      WebSocket: attempts.Ctor,
      backoff
    })
    try {
      const { port, token } = server
      const closedAt = new Promise<number>((resolve) =>
        client.onStatus((s) => {
          if (s === "reconnecting") resolve(performance.now())
        })
      )
      await server.close()
      const dropped = await closedAt
      // Three refused attempts while the server is away, then it is back on its port.
      await attempts.reach(4)
      server = await start(dataDir, { port, token })
      await statusOf(client, "open")
      const { times } = attempts
      const gaps = [times[1]! - dropped, times[2]! - times[1]!, times[3]! - times[2]!]
      // Timers never fire early (1 ms of rounding aside); late is fine under load.
      expect(gaps[0]).toBeGreaterThanOrEqual(99)
      expect(gaps[1]).toBeGreaterThanOrEqual(199)
      expect(gaps[2]).toBeGreaterThanOrEqual(399)

      // After the welcome: the first delay again (100 ms), not the fifth or later (1.6 s and more).
      const before = times.length
      const droppedAgain = performance.now()
      dropConnections(server)
      await statusOf(client, "reconnecting")
      await statusOf(client, "open")
      expect(times).toHaveLength(before + 1)
      const gap = times[before]! - droppedAgain
      expect(gap).toBeGreaterThanOrEqual(99)
      expect(gap).toBeLessThan(1_500)
    } finally {
      client.close()
      await server.close()
    }
  })
})

describe("what ends the client", () => {
  it("a token refused after a restart (4401): closed for good, queued commands fail unauthorized", async () => {
    const dataDir = dirs.make("4401")
    let server = await start(dataDir)
    const client = await PlanbridgeClient.connect({
      url: server.url,
      token: server.token,
      WebSocket: Ws,
      backoff: { initialMs: 10, maxMs: 100 }
    })
    try {
      const statuses: Array<string> = []
      client.onStatus((s) => statuses.push(s))
      const { port } = server
      await server.close()
      await statusOf(client, "reconnecting")
      const queued = failure(client.listThreads())
      server = await start(dataDir, { port, token: "another-token" })
      const error = await queued
      expect(error.code).toBe("unauthorized")
      expect(client.status).toBe("closed")
      expect(statuses.at(-1)).toBe("closed")
      expect((await failure(client.listThreads())).code).toBe("closed")
    } finally {
      client.close()
      await server.close()
    }
  })

  it("close(): the socket is closed 1000, commands in flight and later fail closed, and nothing reconnects", async () => {
    const server = await start(dirs.make("close"))
    const attempts = recordAttempts()
    const client = await PlanbridgeClient.connect({
      url: server.url,
      token: server.token,
      WebSocket: attempts.Ctor,
      backoff: { initialMs: 10, maxMs: 100 }
    })
    try {
      const statuses: Array<string> = []
      client.onStatus((s) => statuses.push(s))
      const serverSaw = nextServerSideClose(server)
      const socket = attempts.sockets[0]!
      const socketClosed = new Promise((resolve) => socket.once("close", resolve))
      const inFlight = failure(client.listThreads())
      client.close()
      client.close()
      expect(await inFlight).toMatchObject({ code: "closed", message: "the client was closed" })
      expect(await serverSaw).toEqual({ code: 1000, reason: "client closed" })
      expect(statuses).toEqual(["closed"])
      expect(await failure(client.listThreads())).toMatchObject({ code: "closed", message: "the client is closed" })
      // The socket's own close event comes last, and is no drop: nothing is scheduled, nothing reopened.
      await socketClosed
      expect(statuses).toEqual(["closed"])
      expect(attempts.sockets).toHaveLength(1)
    } finally {
      await server.close()
    }
  })

  it("close() from an event handler: frames the socket still delivers before its close are dropped", async () => {
    const server = await start(dirs.make("close-late-frames"))
    const threadId = "thread-late-frames" as ThreadId
    await ingest(server, [started(threadId), ...Array.from({ length: 200 }, (_, i) => delta(threadId, `d${i} `))])
    const attempts = recordAttempts()
    const client = await PlanbridgeClient.connect({ url: server.url, token: server.token, WebSocket: attempts.Ctor })
    try {
      const socketClosed = new Promise((resolve) => attempts.sockets[0]!.once("close", resolve))
      const seen: Array<string> = []
      const statuses: Array<string> = []
      client.onStatus((s) => statuses.push(s))
      client.onEvent((_, event) => {
        seen.push(event.eventId)
        if (seen.length === 1) client.close()
      })
      // From the start: the server writes all 201 events at once, so more are on their way when the app closes.
      const followed = await client.follow(threadId, { fromStart: true }).then(
        () => "followed",
        (error: PlanbridgeError) => error.code
      )
      // Its result comes after the replayed events: the close() failed it.
      expect(followed).toBe("closed")
      // Every frame the server wrote before its close frame has been read by then.
      await socketClosed
      expect(seen).toHaveLength(1)
      expect(client.status).toBe("closed")
      expect(statuses).toEqual(["closed"])
    } finally {
      client.close()
      await server.close()
    }
  })

  it("close() while reconnecting cancels the attempt to come; a queued command fails closed", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0.5)
    const server = await start(dirs.make("close-reconnecting"))
    const attempts = recordAttempts()
    const client = await PlanbridgeClient.connect({
      url: server.url,
      token: server.token,
      WebSocket: attempts.Ctor,
      backoff: { initialMs: 200, maxMs: 200 }
    })
    try {
      dropConnections(server)
      await statusOf(client, "reconnecting")
      const queued = failure(client.listThreads())
      client.close()
      expect(await queued).toMatchObject({ code: "closed" })
      expect(client.status).toBe("closed")
      // The attempt was due 100 ms after the drop. A cancelled one never comes, and an absence
      // cannot be awaited: five times its delay is waited instead.
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(attempts.sockets).toHaveLength(1)
      expect(server.app.websocketServer.clients.size).toBe(0)
    } finally {
      await server.close()
    }
  })
})

describe("the WebSocket implementation", () => {
  it("is globalThis.WebSocket when none is passed; with neither, connect fails closed without a throw", async () => {
    const server = await start(dirs.make("global"))
    try {
      vi.stubGlobal("WebSocket", Ws)
      const client = await PlanbridgeClient.connect({ url: server.url, token: server.token })
      expect(client.status).toBe("open")
      expect(await client.listThreads()).toEqual([])
      client.close()
      vi.stubGlobal("WebSocket", undefined)
      const refused = await failure(PlanbridgeClient.connect({ url: server.url, token: server.token }))
      expect(refused).toMatchObject({
        code: "closed",
        message: "no WebSocket implementation: pass options.WebSocket"
      })
    } finally {
      await server.close()
    }
  })
})
