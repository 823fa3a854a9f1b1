import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A scripted Anthropic Messages-API model on loopback, for running the real Claude Code CLI
 * (Agent SDK, claude-agent-acp) offline. Each "main" request (one that offers tools) consumes
 * the next scripted turn; auxiliary requests (tool-less title/summary calls) and
 * `count_tokens` get fixed answers. Every request body is logged, so a test can assert what
 * the model was really told (tool results carrying answers, denial messages, plans).
 */

export type ScriptedBlock =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "thinking"; readonly thinking: string }
  | { readonly type: "tool_use"; readonly name: string; readonly input: unknown; readonly id?: string }

export interface ScriptedTurn {
  readonly blocks: ReadonlyArray<ScriptedBlock>
  /** Defaults to `tool_use` when a block is a tool use, else `end_turn`. */
  readonly stopReason?: string
}

/** A turn, or a function of the request it answers (to echo what the model was sent). */
export type ScriptedResponse = ScriptedTurn | ((request: MessagesRequest) => ScriptedTurn)

export type RequestKind = "main" | "auxiliary" | "count_tokens" | "other"

export interface LoggedRequest {
  readonly index: number
  readonly path: string
  readonly kind: RequestKind
  readonly body: MessagesRequest
}

/** The parts of a Messages request this mock reads; everything else stays in the log as sent. */
export interface MessagesRequest {
  readonly model?: string
  readonly stream?: boolean
  readonly tools?: ReadonlyArray<{ readonly name?: string }>
  readonly messages?: ReadonlyArray<{ readonly role: string; readonly content: string | ReadonlyArray<ContentBlock> }>
  readonly [key: string]: unknown
}

export interface ContentBlock {
  readonly type: string
  readonly text?: string
  readonly tool_use_id?: string
  readonly content?: unknown
  readonly is_error?: boolean
  readonly [key: string]: unknown
}

export interface MockMessagesModel {
  readonly baseUrl: string
  /** Every request received, in arrival order. */
  readonly requests: ReadonlyArray<LoggedRequest>
  readonly mainRequests: () => ReadonlyArray<LoggedRequest>
  /** Appends turns to the script; main requests consume them in order. */
  readonly script: (...turns: ReadonlyArray<ScriptedResponse>) => void
  /** Resolves once `count` main requests have arrived (already-arrived ones count). */
  readonly waitForMainRequests: (count: number) => Promise<ReadonlyArray<LoggedRequest>>
  /** Turns scripted but not yet consumed. */
  readonly pending: () => number
  readonly close: () => Promise<void>
}

/** Text printed when a main request arrives with nothing scripted: visible in the transcript. */
export const UNSCRIPTED_TEXT = "(mock model: no scripted turn left)"

let counter = 0
const mockId = (prefix: string) => `${prefix}_mock${Date.now().toString(36)}${(counter++).toString(36)}`

export const startMockMessagesModel = async (): Promise<MockMessagesModel> => {
  const requests: Array<LoggedRequest> = []
  const script: Array<ScriptedResponse> = []
  const waiters: Array<{ count: number; resolve: (r: ReadonlyArray<LoggedRequest>) => void }> = []
  const mainRequests = () => requests.filter((r) => r.kind === "main")

  const notify = () => {
    const main = mainRequests()
    for (const waiter of [...waiters]) {
      if (main.length >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve(main)
      }
    }
  }

  const server: Server = createServer((req, res) => {
    readBody(req)
      .then((raw) => handle(req, res, raw))
      .catch((error: unknown) => {
        res.writeHead(500, { "content-type": "application/json" })
        res.end(JSON.stringify({ type: "error", error: { type: "api_error", message: String(error) } }))
      })
  })

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/"
    const body = (raw.length > 0 ? JSON.parse(raw) : {}) as MessagesRequest
    const kind: RequestKind = path.endsWith("/count_tokens")
      ? "count_tokens"
      : path.endsWith("/v1/messages")
        ? (body.tools?.length ?? 0) > 0
          ? "main"
          : "auxiliary"
        : "other"
    requests.push({ index: requests.length, path, kind, body })
    if (kind === "count_tokens") {
      json(res, { input_tokens: 10 })
    } else if (kind === "other") {
      json(res, {}, 404)
    } else {
      const next = kind === "main" ? script.shift() : undefined
      const turn: ScriptedTurn =
        kind === "auxiliary"
          ? { blocks: [{ type: "text", text: "Mock title" }] }
          : next === undefined
            ? { blocks: [{ type: "text", text: UNSCRIPTED_TEXT }] }
            : typeof next === "function"
              ? next(body)
              : next
      if (body.stream === true) streamTurn(res, body, turn)
      else json(res, messageOf(body, turn))
    }
    if (kind === "main") notify()
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const port = (server.address() as AddressInfo).port

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    mainRequests,
    script: (...turns) => {
      script.push(...turns)
    },
    waitForMainRequests: (count) =>
      new Promise((resolve) => {
        waiters.push({ count, resolve })
        notify()
      }),
    pending: () => script.length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

// ---- reading requests -------------------------------------------------------------------------

/** The content blocks of the last user message, skipping trailing non-user (e.g. system) entries. */
export const lastUserContent = (body: MessagesRequest): ReadonlyArray<ContentBlock> => {
  const messages = body.messages ?? []
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]
    if (message === undefined || message.role !== "user") continue
    return typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content
  }
  return []
}

/** The `tool_result` blocks in the last user message. */
export const lastToolResults = (body: MessagesRequest): ReadonlyArray<ContentBlock> =>
  lastUserContent(body).filter((block) => block.type === "tool_result")

/** A tool result's content as plain text (it may be a string or text blocks). */
export const toolResultText = (block: ContentBlock): string => {
  const content = block.content
  if (typeof content === "string") return content
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) =>
        typeof part === "object" && part !== null && "text" in part && typeof part.text === "string" ? part.text : ""
      )
      .join("")
  }
  return ""
}

/** Text without the `<system-reminder>` blocks the CLI appends to tool results and prompts. */
export const withoutSystemReminders = (text: string): string =>
  text.replace(/\s*<system-reminder>[\s\S]*?<\/system-reminder>\s*/g, "").trim()

/** Every text the request carries in its last user message (text blocks and tool results). */
export const lastUserText = (body: MessagesRequest): string =>
  lastUserContent(body)
    .map((block) => (block.type === "tool_result" ? toolResultText(block) : (block.text ?? "")))
    .join("\n")

// ---- writing responses ------------------------------------------------------------------------

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

const json = (res: ServerResponse, body: unknown, status = 200) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

const usage = { input_tokens: 100, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }

const stopReasonOf = (turn: ScriptedTurn) =>
  turn.stopReason ?? (turn.blocks.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn")

const contentOf = (block: ScriptedBlock) => {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text }
    case "thinking":
      return { type: "thinking", thinking: block.thinking, signature: "mock-signature" }
    case "tool_use":
      return { type: "tool_use", id: block.id ?? mockId("toolu"), name: block.name, input: block.input }
  }
}

const messageOf = (body: MessagesRequest, turn: ScriptedTurn) => ({
  id: mockId("msg"),
  type: "message",
  role: "assistant",
  model: body.model ?? "claude-sonnet-4-5",
  content: turn.blocks.map(contentOf),
  stop_reason: stopReasonOf(turn),
  stop_sequence: null,
  usage
})

/** Splits text into a few pieces so that clients see real deltas, not one blob. */
const pieces = (text: string, size = 12): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out.length > 0 ? out : [""]
}

const streamTurn = (res: ServerResponse, body: MessagesRequest, turn: ScriptedTurn) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  const send = (type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
  const message = messageOf(body, turn)
  send("message_start", { message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } })
  message.content.forEach((block, index) => {
    if (block.type === "text") {
      send("content_block_start", { index, content_block: { type: "text", text: "" } })
      for (const text of pieces(block.text ?? "")) send("content_block_delta", { index, delta: { type: "text_delta", text } })
    } else if (block.type === "thinking") {
      send("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } })
      for (const thinking of pieces(block.thinking ?? ""))
        send("content_block_delta", { index, delta: { type: "thinking_delta", thinking } })
      send("content_block_delta", { index, delta: { type: "signature_delta", signature: "mock-signature" } })
    } else {
      send("content_block_start", { index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } })
      for (const partial_json of pieces(JSON.stringify(block.input ?? {}), 40))
        send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } })
    }
    send("content_block_stop", { index })
  })
  send("message_delta", { delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: 20 } })
  send("message_stop", {})
  res.end()
}
