import { randomBytes } from "node:crypto"
import { connect as netConnect, type Socket } from "node:net"

/** A raw TCP client, for requests no HTTP library would send (half-sent, odd upgrades). */
export interface RawClient {
  readonly socket: Socket
  /** Everything received so far. */
  readonly received: () => string
  /** Resolves with everything received once the response head (up to the blank line) is in. */
  readonly head: Promise<string>
  /** Resolves when the server ends or destroys the connection. */
  readonly closed: Promise<void>
}

export const openRaw = (port: number, text: string): Promise<RawClient> =>
  new Promise((resolve, reject) => {
    const socket = netConnect({ host: "127.0.0.1", port })
    let data = ""
    let gotHead: (head: string) => void = () => {}
    const head = new Promise<string>((res) => (gotHead = res))
    const closed = new Promise<void>((res) => socket.once("close", () => res()))
    socket.on("data", (chunk) => {
      data += chunk.toString("latin1")
      if (data.includes("\r\n\r\n")) gotHead(data)
    })
    // A reset from the server is one way of closing; the test looks at what was received.
    socket.on("error", () => undefined)
    socket.once("connect", () => {
      socket.write(text)
      resolve({ socket, received: () => data, head, closed })
    })
    socket.once("error", reject)
  })

/** A complete WebSocket upgrade request. */
export const upgradeRequest = (port: number, path: string, headers: Record<string, string> = {}): string => {
  const lines = [
    `GET ${path} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    "Connection: Upgrade",
    "Upgrade: websocket",
    "Sec-WebSocket-Version: 13",
    `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)
  ]
  return `${lines.join("\r\n")}\r\n\r\n`
}

/** `HTTP/1.1 403 Forbidden …` → 403. */
export const statusOf = (head: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? "0")
