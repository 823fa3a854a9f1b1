import { PROTOCOL_VERSION, ServerFrame, type Command } from "@planbridge/contracts"
import { Schema } from "effect"
import WebSocket from "ws"

const decodeServerFrame = Schema.decodeUnknownSync(ServerFrame)

export interface TestClient {
  readonly socket: WebSocket
  /** Every server frame received, decoded with the protocol's Schemas (a bad frame fails the test). */
  readonly frames: Array<ServerFrame>
  readonly command: (command: Command) => Promise<ServerFrame & { type: "result" | "error" }>
  /** Sends raw text (for bad-input tests). */
  readonly sendRaw: (text: string) => void
  /** Resolves with the first frame (already received or future) that matches. */
  readonly waitFor: <F extends ServerFrame>(match: (frame: ServerFrame) => frame is F, timeoutMs?: number) => Promise<F>
  readonly close: () => Promise<void>
}

export interface ConnectOptions {
  readonly url: string
  readonly token?: string
  /** Send the token in the hello frame instead of the Authorization header (as a browser does). */
  readonly tokenInHello?: boolean
  readonly origin?: string
  readonly hello?: boolean
  /** `hello.clientId`: the client's own id, recorded by the resolutions it makes. */
  readonly clientId?: string
}

let nextId = 0

/** A real `ws` client speaking the Planbridge protocol. */
export const connect = async (options: ConnectOptions): Promise<TestClient> => {
  const headers: Record<string, string> = {}
  if (options.token !== undefined && options.tokenInHello !== true) headers.authorization = `Bearer ${options.token}`
  if (options.origin !== undefined) headers.origin = options.origin
  const socket = new WebSocket(options.url.replace(/^http/, "ws") + "/ws", { headers })
  const frames: Array<ServerFrame> = []
  const waiters: Array<{
    match: (f: ServerFrame) => boolean
    resolve: (f: ServerFrame) => void
    reject: (e: Error) => void
  }> = []
  // A closed socket will never deliver what someone waits for: fail them at once.
  socket.on("close", (code, reason) => {
    for (const w of waiters.splice(0)) w.reject(new Error(`socket closed (${code} ${String(reason)}) while waiting`))
  })
  socket.on("message", (data) => {
    const frame = decodeServerFrame(JSON.parse(String(data)))
    frames.push(frame)
    for (const w of [...waiters]) {
      if (w.match(frame)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve(frame)
      }
    }
  })
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve())
    socket.once("error", reject)
    socket.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)))
  })
  const waitFor = <F extends ServerFrame>(
    match: (frame: ServerFrame) => frame is F,
    timeoutMs = 20_000
  ): Promise<F> => {
    const seen = frames.find(match)
    if (seen !== undefined) return Promise.resolve(seen)
    return new Promise<F>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no matching frame; got ${frames.map((f) => f.type).join(",")}`)),
        timeoutMs
      )
      waiters.push({
        match,
        resolve: (f) => (clearTimeout(timer), resolve(f as F)),
        reject: (e) => (clearTimeout(timer), reject(e))
      })
    })
  }
  const client: TestClient = {
    socket,
    frames,
    sendRaw: (text) => socket.send(text),
    command: (command) => {
      const id = `c${++nextId}`
      socket.send(JSON.stringify({ type: "command", id, command }))
      return waitFor(
        (f): f is ServerFrame & { type: "result" | "error" } =>
          (f.type === "result" || f.type === "error") && f.id === id
      )
    },
    waitFor,
    close: () =>
      new Promise<void>((resolve) => {
        if (socket.readyState === WebSocket.CLOSED) return resolve()
        socket.once("close", () => resolve())
        socket.close()
      })
  }
  if (options.hello !== false) {
    socket.send(
      JSON.stringify({
        type: "hello",
        protocolVersion: PROTOCOL_VERSION,
        ...(options.tokenInHello ? { token: options.token } : {}),
        ...(options.clientId === undefined ? {} : { clientId: options.clientId })
      })
    )
    await waitFor((f): f is ServerFrame & { type: "welcome" } => f.type === "welcome")
  }
  return client
}

export const isEvent =
  <T extends string>(type: T, threadId?: string) =>
  (f: ServerFrame): f is ServerFrame & { type: "event" } =>
    f.type === "event" && f.event.type === type && (threadId === undefined || f.threadId === threadId)
