import type { ServerResponse } from "node:http"
import {
  openEventStream,
  pieces,
  startScriptedModelServer,
  writeEvent,
  modelRunId,
  writeJson,
  type ScriptedModelServer
} from "./scriptedModelServer.ts"
import { definedFields } from "../util/definedFields.ts"

/**
 * A scripted Anthropic Messages-API model on loopback, for running the real Claude Code CLI
 * (Agent SDK, claude-agent-acp) offline. Each "main" request (one that offers tools) consumes
 * the next scripted turn; auxiliary requests (tool-less title/summary calls, prompt
 * suggestions) and `count_tokens` get fixed answers. Every request body is logged, so a test
 * can assert what the model was really told (tool results carrying answers, denial messages,
 * plans).
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
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
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

export interface MockMessagesModel extends ScriptedModelServer<LoggedRequest, ScriptedResponse> {}

/** Text printed when a main request arrives with nothing scripted: visible in the transcript. */
export const UNSCRIPTED_TEXT = "(mock model: no scripted turn left)"

/** Message and tool-use ids: `<kind>_mock_<run>_<n>`, unique across restarts (`modelRunId`). */
const RUN = modelRunId()
let counter = 0
const mockId = (prefix: string) => `${prefix}_mock_${RUN}_${counter++}`

/**
 * The CLI's prompt suggestion ("what might the user type next"; claude-agent-acp turns it on):
 * a fork of the conversation sent after a turn's result, offering the conversation's tools only
 * to share its prompt cache. It is not a turn: when it arrived after a test had scripted the
 * next turn, it took that turn and the test's own request found the script empty.
 */
const SUGGESTION_PROMPT = "[SUGGESTION MODE:"
const isPromptSuggestion = (body: MessagesRequest): boolean =>
  lastUserContent(body)[0]?.text?.startsWith(SUGGESTION_PROMPT) === true

/** Which of the Messages API's endpoints a request hit, and whether it is a turn of the conversation. */
const kindOf = (path: string, body: MessagesRequest): RequestKind =>
  path.endsWith("/count_tokens")
    ? "count_tokens"
    : path.endsWith("/v1/messages")
      ? (body.tools?.length ?? 0) > 0 && !isPromptSuggestion(body)
        ? "main"
        : "auxiliary"
      : "other"

const answer = (res: ServerResponse, body: MessagesRequest, turn: ScriptedTurn) => {
  if (body.stream === true) streamTurn(res, body, turn)
  else writeJson(res, messageOf(body, turn))
}

export interface MockMessagesModelOptions {
  /** Answers a main request that finds the script empty (default: `UNSCRIPTED_TEXT`); demo mode's scenarios. */
  /** See `ScriptedModelServerOptions.maxLogged`. */
  readonly maxLogged?: number
  readonly unscripted?: (request: MessagesRequest) => ScriptedTurn
}

export const startMockMessagesModel = (options: MockMessagesModelOptions = {}): Promise<MockMessagesModel> =>
  startScriptedModelServer<MessagesRequest, LoggedRequest, ScriptedResponse, ScriptedTurn>({
    ...definedFields({ maxLogged: options.maxLogged }),
    parseBody: (raw) => (raw.length > 0 ? JSON.parse(raw) : {}) as MessagesRequest,
    isMain: ({ path, body }) => kindOf(path, body) === "main",
    log: ({ index, path, headers, body }) => ({ index, path, kind: kindOf(path, body), headers, body }),
    turnOf: (next, logged) =>
      next === undefined
        ? (options.unscripted?.(logged.body) ?? { blocks: [{ type: "text", text: UNSCRIPTED_TEXT }] })
        : typeof next === "function"
          ? next(logged.body)
          : next,
    respond: (res, turn, logged) => answer(res, logged.body, turn),
    respondOther: (res, logged) => {
      if (logged.kind === "count_tokens") writeJson(res, { input_tokens: 10 })
      else if (logged.kind === "auxiliary") answer(res, logged.body, { blocks: [{ type: "text", text: "Mock title" }] })
      else writeJson(res, {}, 404)
    },
    fail: (res, error) => writeJson(res, { type: "error", error: { type: "api_error", message: String(error) } }, 500)
  })

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

const streamTurn = (res: ServerResponse, body: MessagesRequest, turn: ScriptedTurn) => {
  openEventStream(res)
  const send = (type: string, data: object) => writeEvent(res, { type, ...data })
  const message = messageOf(body, turn)
  send("message_start", {
    message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } }
  })
  message.content.forEach((block, index) => {
    if (block.type === "text") {
      send("content_block_start", { index, content_block: { type: "text", text: "" } })
      for (const text of pieces(block.text ?? "", 12))
        send("content_block_delta", { index, delta: { type: "text_delta", text } })
    } else if (block.type === "thinking") {
      send("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } })
      for (const thinking of pieces(block.thinking ?? "", 12))
        send("content_block_delta", { index, delta: { type: "thinking_delta", thinking } })
      send("content_block_delta", { index, delta: { type: "signature_delta", signature: "mock-signature" } })
    } else {
      send("content_block_start", {
        index,
        content_block: { type: "tool_use", id: block.id, name: block.name, input: {} }
      })
      for (const partial_json of pieces(JSON.stringify(block.input ?? {}), 40))
        send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } })
    }
    send("content_block_stop", { index })
  })
  send("message_delta", {
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { output_tokens: 20 }
  })
  send("message_stop", {})
  res.end()
}
