import { ClientFrame, PROTOCOL_VERSION, type ErrorInfo, type ResolvedBy, type ServerFrame } from "@planbridge/contracts"
import { Cause, Deferred, Effect, Exit, Schema, Scope } from "effect"
import type { WebSocket } from "ws"
import type { Authentication } from "../server/Authentication.ts"
import type { ServerRuntime } from "../server/ServerServices.ts"
import { wireFailureOf } from "../server/WireErrors.ts"
import { dispatchCommand } from "./CommandDispatcher.ts"
import { FLOW_HIGH_WATER_BYTES } from "./EventFrames.ts"
import { makeThreadFeed, type FeedReads } from "./ThreadFeed.ts"
import { makeThreadListFeed, type ThreadListReads } from "./ThreadListFeed.ts"
import type { ThreadHub } from "./ThreadHub.ts"

type WelcomeFrame = Extract<ServerFrame, { type: "welcome" }>

export interface ConnectionOptions {
  /** Commands run here: in the server's context (sessions, process groups, the store). */
  readonly runtime: ServerRuntime
  /** What the connection's feed reads (the server's store services). */
  readonly reads: FeedReads
  /** What the thread list's subscription reads (`threads.subscribe`). */
  readonly threadList: ThreadListReads
  readonly auth: Authentication
  /** Authenticated by an `Authorization` header at upgrade (non-browser clients). */
  readonly preAuthenticated: boolean
  /** The providers as known when a client says hello (a probe may still be running: `unknown`). */
  readonly providers: () => WelcomeFrame["providers"]
  /** Largest frame answered with a typed error; larger ones are refused by the socket itself. */
  readonly maxFrameBytes: number
  /**
   * Unsent bytes past which a frame is not even queued: the client is disconnected (it resumes
   * with `afterSeq`). Events never get there (they stop at FLOW_HIGH_WATER_BYTES and are read
   * from the log later); only replies a client asks for without reading them can.
   */
  readonly maxBufferedBytes: number
  readonly helloTimeoutMs: number
  readonly hub: ThreadHub["Service"]
  /**
   * The TCP socket under the WebSocket. The frames sent in one synchronous run (a backlog page)
   * are corked into one write: `ws` writes every frame on its own, and 1,000 `writev` calls were
   * a third of a 1,000-event resume. Live runs, already whole frames (EventFrames.ts), are
   * written to it directly: `ws` negotiates no extension here (HttpServer.ts) and writes each
   * frame synchronously, so frames written either way never interleave. Corked and written bytes
   * count in `bufferedAmount`, so flow control sees them.
   */
  readonly stream: {
    readonly cork: () => void
    readonly uncork: () => void
    readonly write: (bytes: Uint8Array) => boolean
  }
  /** The server's logger (it scrubs credentials from every line); the feeds' fibers log through the runtime's, the same one. */
  readonly log: { readonly error: (details: object, message: string) => void }
}

/**
 * Command ids are 1–200 characters (`CommandFrame` in the contracts). An `invalid_frame` error
 * echoes the id of the frame that failed only within that bound, so that a client cannot make
 * the server send back (and a log or proxy keep) up to a whole frame of its own choosing.
 */
export const MAX_COMMAND_ID_LENGTH = 200

const echoableId = (json: unknown): string | null => {
  const id = typeof json === "object" && json !== null ? (json as { id?: unknown }).id : undefined
  return typeof id === "string" && id.length > 0 && id.length <= MAX_COMMAND_ID_LENGTH ? id : null
}

const decodeFrame = Schema.decodeUnknownExit(ClientFrame)

/** The `id` of a refused oversized text frame, when it is JSON with an echoable one. */
const frameTooLargeId = (data: unknown, isBinary: boolean): string | null => {
  if (isBinary) return null
  try {
    return echoableId(JSON.parse(String(data)))
  } catch {
    return null
  }
}

/** Close reasons (≤ 123 bytes) after a feed step failed: code 1011, the store failed (PROTOCOL.md). */
export const THREAD_FEED_FAILED = "server error: reconnect and resume with afterSeq"
export const THREAD_LIST_FAILED = "server error: reconnect and subscribe to the thread list again"
/** How often a connection with lagging threads looks whether its socket has drained. */
const DRAIN_POLL_MS = 5

/**
 * One client connection: `hello` (with the token unless the upgrade carried it) → `welcome`,
 * then commands, each answered by a `result` or an `error` with the same id. Bad frames get a
 * typed error and the connection stays usable; only an unauthenticated client is closed.
 */
export const serveConnection = (socket: WebSocket, options: ConnectionOptions): void => {
  const { runtime } = options
  let authenticated = false
  let closed = false

  const send = (frame: ServerFrame): void => sendText(JSON.stringify(frame))
  let corked = false
  const uncork = (): void => {
    corked = false
    options.stream.uncork()
  }
  /** Whether a frame may be queued; closes a client that left too much unread (checked before queuing, so one large frame, a snapshot, alone never closes it). */
  const writable = (): boolean => {
    if (closed) return false
    if (socket.bufferedAmount > options.maxBufferedBytes) {
      closed = true
      socket.close(1013, "client too slow: reconnect and resume with afterSeq")
      return false
    }
    return true
  }
  const sendText = (text: string): void => {
    if (!writable()) return
    if (!corked) {
      corked = true
      options.stream.cork()
      // Once the current synchronous run is over: a microtask, so no frame waits for the event loop.
      queueMicrotask(uncork)
    }
    socket.send(text)
  }
  /** Whole frames as they are, in one write; only on an open socket (after `close` no frame may follow ws's). */
  const sendFrames = (frames: ReadonlyArray<Buffer>): void => {
    if (!writable() || socket.readyState !== socket.OPEN) return
    if (frames.length === 1) {
      options.stream.write(frames[0]!)
      return
    }
    // Corked, the frames go out in one `writev`: one system call, and no copy to join them.
    options.stream.cork()
    for (const frame of frames) options.stream.write(frame)
    options.stream.uncork()
  }
  const sendError = (id: string | null, error: ErrorInfo): void => send({ type: "error", id, error })

  /** Ends the connection after a feed step failed (its fiber has logged why): the client resumes. */
  const endAfterFailure = (reason: string) => (): void => {
    if (closed) return
    closed = true
    socket.close(1011, reason)
  }

  /**
   * The connection's feeds and their fibers live in a scope of their own, closed when the socket
   * closes, or when the server's runtime stops (its disposal interrupts the fiber that holds the
   * scope open): the feeds stop listening and their fibers are interrupted, whatever step they are in.
   */
  const feedScope = Scope.makeUnsafe()
  const { feed, threadList } = runtime.runSync(
    Scope.provide(feedScope)(
      Effect.all({
        feed: makeThreadFeed({
          reads: options.reads,
          send,
          sendText,
          sendFrames,
          congested: () => socket.bufferedAmount >= FLOW_HIGH_WATER_BYTES,
          room: () => Math.max(0, FLOW_HIGH_WATER_BYTES - socket.bufferedAmount),
          onLagging: () => waitForDrain(),
          end: endAfterFailure(THREAD_FEED_FAILED),
          hub: options.hub
        }),
        threadList: makeThreadListFeed({
          reads: options.threadList,
          hub: options.hub,
          send,
          end: endAfterFailure(THREAD_LIST_FAILED)
        })
      })
    )
  )
  const socketClosed = Deferred.makeUnsafe<void>()
  runtime.runFork(Effect.ensuring(Deferred.await(socketClosed), Scope.close(feedScope, Exit.void)))

  /** `ws` has no drain event: look at the socket until it took what was queued, then catch up. */
  let drainTimer: ReturnType<typeof setTimeout> | undefined
  const waitForDrain = (): void => {
    if (drainTimer !== undefined || closed) return
    drainTimer = setTimeout(() => {
      drainTimer = undefined
      if (closed) return
      if (socket.bufferedAmount < FLOW_HIGH_WATER_BYTES / 2) feed.resume()
      if (feed.lagging()) waitForDrain()
    }, DRAIN_POLL_MS)
  }

  const helloTimer = setTimeout(() => {
    if (!authenticated && !closed) {
      sendError(null, { code: "unauthorized", message: "no hello with a valid token in time" })
      closed = true
      socket.close(4401, "unauthorized")
    }
  }, options.helloTimeoutMs)

  /** Who this connection's answers come from (`resolvedBy`): a person on a WebSocket client. */
  let sender: ResolvedBy = { actor: "user", via: "ws" }

  const onHello = (frame: ClientFrame & { type: "hello" }): void => {
    if (frame.protocolVersion !== PROTOCOL_VERSION) {
      sendError(null, { code: "protocol_version", message: `this server speaks protocol version ${PROTOCOL_VERSION}` })
      return
    }
    if (!options.preAuthenticated && !options.auth.acceptsToken(frame.token)) {
      sendError(null, { code: "unauthorized", message: "missing or wrong token" })
      closed = true
      socket.close(4401, "unauthorized")
      return
    }
    authenticated = true
    if (frame.clientId !== undefined) sender = { ...sender, clientId: frame.clientId }
    clearTimeout(helloTimer)
    send({
      type: "welcome",
      protocolVersion: PROTOCOL_VERSION,
      providers: options.providers(),
      limits: { maxFrameBytes: options.maxFrameBytes }
    })
  }

  const onCommand = async (frame: ClientFrame & { type: "command" }): Promise<void> => {
    const exit = await runtime.runPromiseExit(dispatchCommand(frame.command, feed, threadList, sender))
    // The socket closed while the command waited for its feed's turn: nobody to tell, nothing failed.
    if (closed && Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) return
    if (Exit.isSuccess(exit)) {
      // Encoded with the command's `success` Schema (CommandDispatcher.ts): JSON, as the table says.
      send({ type: "result", id: frame.id, result: exit.value })
      return
    }
    const failure = wireFailureOf(exit.cause, "command")
    sendError(frame.id, failure.error)
    if (failure.unexpected !== undefined) options.log.error({ cause: failure.unexpected }, "command failed")
  }

  socket.on("message", (data, isBinary) => {
    const bytes = Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : (data as ArrayBuffer).byteLength
    if (bytes > options.maxFrameBytes) {
      // Echo the command's id when the frame is JSON that has one, so that the client can tell
      // which command was refused (its promise would wait forever on `id: null`). Parsing costs
      // at most what the WebSocket layer lets through (4 x maxFrameBytes, HttpServer.ts).
      sendError(frameTooLargeId(data, isBinary), {
        code: "frame_too_large",
        message: `frames are limited to ${options.maxFrameBytes} bytes; this one has ${bytes}`
      })
      return
    }
    if (isBinary) {
      sendError(null, { code: "bad_json", message: "frames are JSON text" })
      return
    }
    let json: unknown
    try {
      json = JSON.parse(String(data))
    } catch {
      sendError(null, { code: "bad_json", message: "the frame is not valid JSON" })
      return
    }
    const decoded = decodeFrame(json)
    if (Exit.isFailure(decoded)) {
      const error = Cause.findErrorOption(decoded.cause)
      const message = error._tag === "Some" ? error.value.message : "invalid frame"
      sendError(echoableId(json), { code: "invalid_frame", message })
      return
    }
    const frame = decoded.value
    if (frame.type === "hello") return onHello(frame)
    if (!authenticated) {
      sendError(frame.id, { code: "unauthorized", message: "send hello with a valid token first" })
      return
    }
    void onCommand(frame)
  })

  socket.on("close", () => {
    closed = true
    clearTimeout(helloTimer)
    clearTimeout(drainTimer)
    Deferred.doneUnsafe(socketClosed, Effect.void)
  })
}
