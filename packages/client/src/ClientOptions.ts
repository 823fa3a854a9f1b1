import type { BackoffOptions } from "./backoff.ts"
import type { WebSocketConstructor } from "./WebSocketLike.ts"

export interface ClientOptions {
  /** The server, e.g. `http://127.0.0.1:4317` (the WebSocket is `/ws` on it). */
  readonly url: string
  /** Sent in `hello` (browsers cannot set headers on a WebSocket). */
  readonly token: string
  /** Defaults to `globalThis.WebSocket` (browsers, Node ≥ 22); pass `ws`'s on Node 20. */
  readonly WebSocket?: WebSocketConstructor
  readonly backoff?: BackoffOptions
  /** Named in `hello`, for the server's logs. */
  readonly clientName?: string
  /**
   * This browser's or device's own id, stable across reloads (`hello.clientId`): the server
   * records it on what this client resolves, so the page can say "answered by you on this browser".
   */
  readonly clientId?: string
  /** A frame this client could not decode (a newer server?). It is dropped. */
  readonly onBadFrame?: (text: string, error: string) => void
}
