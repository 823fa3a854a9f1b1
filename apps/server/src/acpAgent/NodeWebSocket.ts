import type { WebSocketLike } from "@planbridge/client"
import WebSocket from "ws"

/**
 * `ws`'s WebSocket as the client library's `WebSocketLike` (Node 20 has no global WebSocket):
 * the same calls, with the handlers the library sets forwarded to `ws`'s events. Text frames
 * arrive as strings, as in a browser.
 */
export class NodeWebSocket implements WebSocketLike {
  onopen: ((event: unknown) => void) | null = null
  onmessage: ((event: { readonly data: unknown }) => void) | null = null
  onclose: ((event: { readonly code: number; readonly reason: string }) => void) | null = null
  onerror: ((event: unknown) => void) | null = null
  private readonly socket: WebSocket

  constructor(url: string) {
    this.socket = new WebSocket(url)
    this.socket.on("open", () => this.onopen?.(undefined))
    this.socket.on("message", (data, isBinary) => this.onmessage?.({ data: isBinary ? data : data.toString() }))
    this.socket.on("close", (code, reason) => this.onclose?.({ code, reason: reason.toString() }))
    this.socket.on("error", (error) => this.onerror?.(error))
  }

  get readyState(): number {
    return this.socket.readyState
  }
  send(data: string): void {
    this.socket.send(data)
  }
  close(code?: number, reason?: string): void {
    this.socket.close(code, reason)
  }
}
