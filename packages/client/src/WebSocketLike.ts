/** The part of the WebSocket API this client uses: the browser's, Node 22's, or `ws`'s. */
export interface WebSocketLike {
  readonly readyState: number
  send(data: string): void
  close(code?: number, reason?: string): void
  onopen: ((event: unknown) => void) | null
  onmessage: ((event: { readonly data: unknown }) => void) | null
  onclose: ((event: { readonly code: number; readonly reason: string }) => void) | null
  onerror: ((event: unknown) => void) | null
}
export type WebSocketConstructor = new (url: string) => WebSocketLike
