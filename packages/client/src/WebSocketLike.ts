/**
 * An event handler property, its event checked as a method's parameter is (both ways): the
 * browser's, Node's and `ws`'s sockets each type their handlers with their own event classes,
 * which carry at least what the client reads.
 */
type Handler<Event> = { handle(event: Event): void }["handle"]

/** The part of the WebSocket API this client uses: the browser's, Node 22's, or `ws`'s. */
export interface WebSocketLike {
  readonly readyState: number
  send(data: string): void
  close(code?: number, reason?: string): void
  onopen: Handler<unknown> | null
  onmessage: Handler<{ readonly data: unknown }> | null
  onclose: Handler<{ readonly code: number; readonly reason: string }> | null
  onerror: Handler<unknown> | null
}
export type WebSocketConstructor = new (url: string) => WebSocketLike
