import { PROTOCOL_VERSION, type Command } from "@planbridge/contracts"
import WebSocket from "ws"

/**
 * A WebSocket client for floods: frames are only JSON-parsed (no Schema decode per frame) and
 * handed to a listener instead of being kept, so that a client seeing 200,000 events costs
 * neither the CPU nor the memory the server is being measured for.
 */
export interface EventFrame {
  readonly type: "event"
  readonly threadId: string
  readonly seq: number
  readonly event: {
    readonly type: string
    readonly eventId: string
    readonly turnId?: string
    readonly itemId?: string
    readonly payload: Record<string, unknown>
  }
}

export interface ReplyFrame {
  readonly type: "result" | "error"
  readonly id: string | null
  readonly result?: Record<string, unknown>
  readonly error?: { readonly code: string; readonly message: string }
}

export interface LiteClient {
  readonly socket: WebSocket
  /** Sends a command; resolves with its result, rejects with its error (code: message). */
  readonly command: (command: Command, timeoutMs?: number) => Promise<Record<string, unknown>>
  /** Sends a command; resolves with the reply frame, result or error. */
  readonly reply: (command: Command, timeoutMs?: number) => Promise<ReplyFrame>
  readonly sendRaw: (text: string) => void
  /** Every event frame, as it arrives. */
  readonly onEvent: (listener: (frame: EventFrame) => void) => void
  /** Every error frame without an id (answers to frames that were no command). */
  readonly onError: (listener: (frame: ReplyFrame) => void) => void
  readonly closed: Promise<number>
  readonly close: () => Promise<void>
}

let nextId = 0

export const connectLite = async (url: string, token: string): Promise<LiteClient> => {
  const socket = new WebSocket(url.replace(/^http/, "ws") + "/ws", { headers: { authorization: `Bearer ${token}` } })
  const replies = new Map<string, (frame: ReplyFrame) => void>()
  const eventListeners: Array<(frame: EventFrame) => void> = []
  const errorListeners: Array<(frame: ReplyFrame) => void> = []
  let welcomed: () => void = () => {}
  const welcome = new Promise<void>((resolve) => (welcomed = resolve))
  const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)))
  socket.on("message", (data) => {
    const frame = JSON.parse(String(data)) as { readonly type: string; readonly id?: string | null }
    if (frame.type === "event") for (const listener of eventListeners) listener(frame as EventFrame)
    else if (frame.type === "welcome") welcomed()
    else if (frame.type === "result" || frame.type === "error") {
      const reply = frame as ReplyFrame
      const waiter = reply.id === null ? undefined : replies.get(reply.id)
      if (waiter !== undefined) {
        replies.delete(reply.id!)
        waiter(reply)
      } else if (reply.type === "error") for (const listener of errorListeners) listener(reply)
    }
  })
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve())
    socket.once("error", reject)
  })
  socket.send(JSON.stringify({ type: "hello", protocolVersion: PROTOCOL_VERSION }))
  await welcome
  const reply = (command: Command, timeoutMs = 30_000) =>
    new Promise<ReplyFrame>((resolve, reject) => {
      const id = `lite-${++nextId}`
      const timer = setTimeout(() => {
        replies.delete(id)
        reject(new Error(`${command.type}: no reply within ${timeoutMs} ms`))
      }, timeoutMs)
      replies.set(id, (frame) => {
        clearTimeout(timer)
        resolve(frame)
      })
      void closed.then((code) => {
        clearTimeout(timer)
        reject(new Error(`${command.type}: socket closed (${code})`))
      })
      socket.send(JSON.stringify({ type: "command", id, command }))
    })
  return {
    socket,
    reply,
    command: async (command, timeoutMs) => {
      const frame = await reply(command, timeoutMs)
      if (frame.type === "error") throw new Error(`${command.type}: ${frame.error?.code}: ${frame.error?.message}`)
      return frame.result ?? {}
    },
    sendRaw: (text) => socket.send(text),
    onEvent: (listener) => void eventListeners.push(listener),
    onError: (listener) => void errorListeners.push(listener),
    closed,
    close: async () => {
      if (socket.readyState === WebSocket.CLOSED) return
      socket.close()
      await closed
    }
  }
}

/**
 * An item's text as a client folds it from event frames: deltas append, a `text` on the item's
 * own events replaces (an oversized `item.completed` arrives as an `item.updated` with the first
 * piece, the rest as deltas, then the `item.completed` without text: EVENTS.md, "Limits").
 */
export const makeTextFold = (itemType = "assistant_message", streamKind = "assistant_text") => {
  let parts: Array<string> = []
  return {
    apply: (frame: EventFrame): void => {
      const { event } = frame
      const { type, payload } = event
      if (type === "content.delta" && payload.streamKind === streamKind) parts.push(String(payload.delta))
      else if (type.startsWith("item.") && payload.itemType === itemType && typeof payload.text === "string") {
        parts = [payload.text]
      }
    },
    text: (): string => parts.join("")
  }
}
