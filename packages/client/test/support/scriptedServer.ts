import { ClientFrame, PROTOCOL_VERSION, type Command, type ServerFrame } from "@planbridge/contracts"
import { Schema } from "effect"
import type { AddressInfo } from "node:net"
import WebSocket, { WebSocketServer } from "ws"

/**
 * A WebSocket server on loopback that plays the server's side of PROTOCOL.md one frame at a
 * time, as a test scripts it: for what a real `planbridge` does not do on demand (a frame this
 * client cannot decode, a `protocol_version` answer to `hello`, close code 1013). Every frame the
 * client sends is decoded with the contracts' `ClientFrame`, so a client that broke the protocol
 * fails the test.
 */

const decodeClientFrame = Schema.decodeUnknownSync(ClientFrame)

/** A queue whose `next` waits for the next item (each item is taken once, in order). */
class Waiting<A> {
  private readonly items: Array<A> = []
  private readonly waiters: Array<(item: A) => void> = []
  push(item: A): void {
    const waiter = this.waiters.shift()
    if (waiter === undefined) this.items.push(item)
    else waiter(item)
  }
  next(): Promise<A> {
    const item = this.items.shift()
    if (item !== undefined) return Promise.resolve(item)
    return new Promise((resolve) => this.waiters.push(resolve))
  }
}

/** One client connection, seen from the server. */
export class ScriptedConnection {
  private readonly frames = new Waiting<ClientFrame>()
  /** The close code and reason, once the connection is closed (from either side). */
  readonly closed: Promise<{ readonly code: number; readonly reason: string }>

  constructor(readonly socket: WebSocket) {
    socket.on("message", (data) => this.frames.push(decodeClientFrame(JSON.parse(String(data)))))
    this.closed = new Promise((resolve) =>
      socket.on("close", (code, reason) => resolve({ code, reason: String(reason) }))
    )
  }

  /** The next frame the client sent. */
  nextFrame(): Promise<ClientFrame> {
    return this.frames.next()
  }

  /** The next frame, which must be a command: its `id` and the command. */
  async nextCommand(): Promise<{ readonly id: string; readonly command: Command }> {
    const frame = await this.nextFrame()
    if (frame.type !== "command") throw new Error(`expected a command, got ${JSON.stringify(frame)}`)
    return { id: frame.id, command: frame.command }
  }

  /** Waits for `hello` (checking its version and token) and answers `welcome`. */
  async welcome(token: string): Promise<void> {
    const hello = await this.nextFrame()
    if (hello.type !== "hello" || hello.protocolVersion !== PROTOCOL_VERSION || hello.token !== token)
      throw new Error(`expected hello with version ${PROTOCOL_VERSION} and the token, got ${JSON.stringify(hello)}`)
    this.send({ type: "welcome", protocolVersion: PROTOCOL_VERSION, providers: [] })
  }

  send(frame: ServerFrame): void {
    this.socket.send(JSON.stringify(frame))
  }

  /** Sends a text frame as it is (a frame that may not decode). */
  sendText(text: string): void {
    this.socket.send(text)
  }

  close(code: number, reason: string): void {
    this.socket.close(code, reason)
  }
}

export interface ScriptedServer {
  /** What to pass as the client's `url`. */
  readonly url: string
  /** The next connection the client opened (each is taken once, in order). */
  readonly nextConnection: () => Promise<ScriptedConnection>
  /** How many connections were opened so far. */
  readonly connections: () => number
  readonly close: () => Promise<void>
}

/** Starts a scripted server on 127.0.0.1, a port of its own, WebSocket at `/ws`. */
export const startScriptedServer = async (): Promise<ScriptedServer> => {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0, path: "/ws" })
  const connections = new Waiting<ScriptedConnection>()
  let opened = 0
  server.on("connection", (socket) => {
    opened++
    connections.push(new ScriptedConnection(socket))
  })
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve)
    server.once("error", reject)
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    nextConnection: () => connections.next(),
    connections: () => opened,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of server.clients) socket.terminate()
        server.close(() => resolve())
      })
  }
}
