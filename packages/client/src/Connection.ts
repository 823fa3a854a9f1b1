import { backoffDelay, DEFAULT_BACKOFF } from "./backoff.ts"
import type { ClientOptions } from "./ClientOptions.ts"
import { openSocket } from "./openSocket.ts"
import { PlanbridgeError } from "./PlanbridgeError.ts"
import type { WebSocketLike } from "./WebSocketLike.ts"

export type ConnectionStatus = "connecting" | "open" | "reconnecting" | "closed"

/** What the client does with what its connection reports. */
export interface ConnectionHandlers {
  readonly onFrame: (text: string) => void
  /** The socket dropped with `code`; a reconnect is scheduled right after. */
  readonly onDropped: (code: number) => void
  /** The connection ended for good (`close()`, a refused token or protocol, an unusable URL). */
  readonly onEnded: (error: PlanbridgeError) => void
}

/**
 * The WebSocket of a client that stays up, and its status: reopened after each drop, at once
 * after a 1013 (the server asked for a retry), else after a backoff delay with jitter that grows
 * with each attempt since the last `welcome`; ended by a refused token (4401) or `end`.
 */
export class Connection {
  private socket: WebSocketLike | undefined
  private status_: ConnectionStatus = "connecting"
  private attempt = 0
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined
  private readonly statusListeners = new Set<(status: ConnectionStatus) => void>()

  constructor(
    private readonly options: ClientOptions,
    private readonly handlers: ConnectionHandlers
  ) {}

  get status(): ConnectionStatus {
    return this.status_
  }

  onStatus(listener: (status: ConnectionStatus) => void): () => void {
    this.statusListeners.add(listener)
    return () => this.statusListeners.delete(listener)
  }

  open(): void {
    const socket = openSocket(this.options, {
      onFrame: (from, text) => {
        // `ws` still delivers what it reads while closing (browsers do not): after `end`, or
        // after the socket was replaced, its frames are no longer this connection's.
        if (this.socket === from) this.handlers.onFrame(text)
      },
      onClose: (closed, code, reason) => {
        if (this.socket !== closed) return
        this.socket = undefined
        this.onClosed(code, reason)
      }
    })
    if (socket instanceof PlanbridgeError) return this.end(socket)
    this.socket = socket
  }

  /** Sends a text frame; dropped while no socket is open (the caller queues what must go). */
  send(text: string): void {
    this.socket?.send(text)
  }

  /** The server said `welcome`: the connection is open, and the next drop starts from the first delay. */
  welcomed(): void {
    this.attempt = 0
    this.setStatus("open")
  }

  /** Ends the connection for good (once): the status turns `closed`, then `onEnded` is told. */
  end(error: PlanbridgeError): void {
    if (this.status_ === "closed") return
    this.setStatus("closed")
    clearTimeout(this.reconnectTimer)
    const socket = this.socket
    this.socket = undefined
    socket?.close(1000, "client closed")
    this.handlers.onEnded(error)
  }

  private onClosed(code: number, reason: string): void {
    if (this.status_ === "closed") return
    if (code === 4401)
      return this.end(new PlanbridgeError({ code: "unauthorized", message: reason || "the token was refused" }))
    this.handlers.onDropped(code)
    this.setStatus("reconnecting")
    const delay = code === 1013 ? 0 : backoffDelay(this.attempt++, this.options.backoff ?? DEFAULT_BACKOFF)
    this.reconnectTimer = setTimeout(() => this.open(), delay)
  }

  private setStatus(status: ConnectionStatus): void {
    if (this.status_ === status) return
    this.status_ = status
    for (const listener of [...this.statusListeners]) listener(status)
  }
}
