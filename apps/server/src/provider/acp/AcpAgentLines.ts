import type * as acp from "@agentclientprotocol/sdk"
import { utf8Head, type ProviderLine } from "../lines.ts"
import { isJsonRpcId, type JsonRpcId } from "../kernel/jsonRpcId.ts"
import { INVALID_LINE_MAX_BYTES, type InvalidLine } from "./AcpNative.ts"
import type { Reply } from "./AcpRequestAnswer.ts"
import { definedFields } from "../../util/definedFields.ts"

/**
 * What the transport reads from an ACP agent, pure, line by line (AcpTransport.ts does the I/O).
 * The SDK's `ndJsonStream` drops a line it cannot use (answering the agent with a JSON-RPC
 * error) and tells nobody; here every such line reaches the session, in stream order, and
 * becomes a `runtime.warning`. A line over `MAX_LINE_BYTES` (the SDK's own limit) cannot be
 * read and may have been a request the agent waits on, so the transport ends the agent instead
 * and the session reports why.
 */

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

/** A line that is no JSON-RPC message, as reported: why, and its head. */
export const invalidLine = (line: ProviderLine, reason: InvalidLine["reason"], error?: string): InvalidLine => ({
  reason,
  text: utf8Head(line.data, INVALID_LINE_MAX_BYTES),
  bytes: line.bytes,
  truncated: line.bytes > INVALID_LINE_MAX_BYTES,
  ...definedFields({ error })
})

export type DecodedLine =
  | { readonly kind: "blank" }
  | { readonly kind: "message"; readonly message: acp.AnyMessage }
  | { readonly kind: "invalid"; readonly line: InvalidLine }

/**
 * What the SDK's connection would accept as a message, minus a request with a `null` id (it
 * could never be answered by id): a JSON-RPC 2.0 request or notification, or anything shaped
 * like a response (no `method`; an `id`, `result` or `error`), which the SDK matches by id.
 */
const isJsonRpcMessage = (u: Record<string, unknown>): boolean =>
  "method" in u
    ? u.jsonrpc === "2.0" && typeof u.method === "string" && (!("id" in u) || isJsonRpcId(u.id))
    : "id" in u || "result" in u || "error" in u

/** Reads one line of the agent's output: a message, a blank line, or an invalid line. */
export const decodeAgentLine = (line: ProviderLine): DecodedLine => {
  const invalid = (reason: InvalidLine["reason"], error?: string): DecodedLine => ({
    kind: "invalid",
    line: invalidLine(line, reason, error)
  })
  if (line.data.length < line.bytes) return invalid("too_long")
  const text = line.data.toString("utf8")
  if (text.trim().length === 0) return { kind: "blank" }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return invalid("not_json", error instanceof Error ? error.message : String(error))
  }
  if (Array.isArray(value)) return invalid("batch")
  if (!isRecord(value)) return invalid("not_object")
  if (!isJsonRpcMessage(value)) return invalid("not_jsonrpc")
  // Checked just above to be a request, notification or response-shaped object.
  return { kind: "message", message: value as acp.AnyMessage }
}

/** The answer the SDK gave such a line (JSON-RPC: an error with a `null` id); kept as it was. */
export const protocolError = (line: InvalidLine) => ({
  jsonrpc: "2.0" as const,
  id: null,
  error:
    line.reason === "not_json"
      ? { code: -32700, message: "Parse error" }
      : line.reason === "batch"
        ? { code: -32600, message: "Invalid request: JSON-RPC batches are not supported" }
        : { code: -32600, message: "Invalid request" }
})

/** A JSON-RPC response (no method) as a reply to one of our requests. */
export const replyOf = (message: unknown): { readonly id: JsonRpcId; readonly reply: Reply } | undefined => {
  if (!isRecord(message) || "method" in message || !isJsonRpcId(message.id)) return undefined
  const error = message.error
  if (!isRecord(error)) return { id: message.id, reply: { result: message.result } }
  const code = typeof error.code === "number" ? error.code : -32603
  const text = typeof error.message === "string" ? error.message : "error"
  return {
    id: message.id,
    reply: { error: error.data === undefined ? { code, message: text } : { code, message: text, data: error.data } }
  }
}
