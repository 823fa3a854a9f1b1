import { PROTOCOL_VERSION } from "@planbridge/contracts"
import type { ClientOptions } from "./ClientOptions.ts"
import { PlanbridgeError } from "./PlanbridgeError.ts"
import type { WebSocketConstructor, WebSocketLike } from "./WebSocketLike.ts"

/** What an open socket reports: each text frame and its close, each with the socket, to tell a stale one. */
export interface SocketHandlers {
  readonly onFrame: (socket: WebSocketLike, text: string) => void
  readonly onClose: (socket: WebSocketLike, code: number, reason: string) => void
}

/**
 * Opens the WebSocket at `<url>/ws` and says `hello` once it is open. A `PlanbridgeError`
 * (`closed`) when there is no WebSocket implementation or the URL is refused: neither gets
 * better by retrying.
 */
export const openSocket = (options: ClientOptions, handlers: SocketHandlers): WebSocketLike | PlanbridgeError => {
  // Declared wider than its type: Node 20 has no global WebSocket, whatever its types say.
  const platform: WebSocketConstructor | undefined = globalThis.WebSocket
  const Ctor = options.WebSocket ?? platform
  if (Ctor === undefined) {
    return new PlanbridgeError({ code: "closed", message: "no WebSocket implementation: pass options.WebSocket" })
  }
  const url = `${options.url.replace(/^http/, "ws").replace(/\/$/, "")}/ws`
  let socket: WebSocketLike
  try {
    socket = new Ctor(url)
  } catch (error) {
    // A URL the WebSocket refuses will not get better by retrying.
    return new PlanbridgeError({ code: "closed", message: `cannot open ${url}: ${String(error)}`, cause: error })
  }
  socket.onopen = () => {
    const hello = {
      type: "hello",
      protocolVersion: PROTOCOL_VERSION,
      token: options.token,
      ...(options.clientName === undefined ? {} : { client: options.clientName }),
      ...(options.clientId === undefined ? {} : { clientId: options.clientId })
    }
    socket.send(JSON.stringify(hello))
  }
  socket.onmessage = (event) =>
    handlers.onFrame(socket, typeof event.data === "string" ? event.data : String(event.data))
  socket.onerror = () => {}
  socket.onclose = (event) => handlers.onClose(socket, event.code, event.reason)
  return socket
}
