import type * as acp from "@agentclientprotocol/sdk"
import type { Effect, Scope } from "effect"
import type { FlowProbe } from "../inbound.ts"
import { utf8Head, type ProviderLine } from "../lines.ts"
import { isJsonRpcId } from "../kernel/jsonRpcId.ts"
import type { AdapterError } from "../AdapterError.ts"
import { makeJsonRpcPeer, type JsonRpcDialect, type JsonRpcPeer } from "../kernel/JsonRpcPeer.ts"
import type { TranscriptEntry } from "../kernel/transcript.ts"
import { INVALID_LINE_MAX_BYTES, replyOf, type InvalidLine } from "./AcpNative.ts"
import { definedFields } from "../../util/definedFields.ts"

/** How much of the agent's stderr is kept (its tail). */
const STDERR_TAIL = 8192

/**
 * What the transport reads from an ACP agent, line by line. The SDK's `ndJsonStream` drops a
 * line it cannot use (answering the agent with a JSON-RPC error) and tells nobody; here every
 * such line reaches the session, in stream order, and becomes a `runtime.warning`. A line over
 * `MAX_LINE_BYTES` (the SDK's own limit) cannot be read and may have been a request the agent
 * waits on, so the transport ends the agent instead and the session reports why.
 */

/** A line that is no JSON-RPC message, as reported: why, and its head. */
const invalidLine = (line: ProviderLine, reason: InvalidLine["reason"], error?: string): InvalidLine => ({
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
  if (typeof value !== "object" || value === null) return invalid("not_object")
  if (!isJsonRpcMessage(value as Record<string, unknown>)) return invalid("not_jsonrpc")
  // Checked just above to be a request, notification or response-shaped object.
  return { kind: "message", message: value as acp.AnyMessage }
}

const invalid = (line: InvalidLine): TranscriptEntry => ({ dir: "local", msg: { kind: "invalid", ...line } })

/**
 * The ACP dialect of the kernel's JSON-RPC peer (JSON-RPC 2.0, NDJSON; our request ids are our
 * own: the ACP SDK's types are used, its connection is not, which assigned ids we had to guess).
 * A line that is no JSON-RPC message (not JSON, a batch, a scalar, an object that is no
 * request/notification/response, a response to no request of ours, over the bound) is a
 * `local` `{kind:"invalid",…InvalidLine}` line, never dropped; the exit is a `local`
 * `{kind:"exit",exitKind,exitCode,signal,message?}` line. A request's caller hears its response
 * once the session has mapped it, so what the response sets up (a session, a mode) is in place.
 */
const acpDialect: JsonRpcDialect<TranscriptEntry> = {
  read: (line, outstanding) => {
    const decoded = decodeAgentLine(line)
    if (decoded.kind === "blank") return undefined
    if (decoded.kind === "invalid") return invalid(decoded.line)
    const message = decoded.message as Record<string, unknown>
    if ("method" in message || (isJsonRpcId(message.id) && outstanding(message.id))) return { dir: "in", msg: message }
    return invalid(invalidLine(line, "unknown_response"))
  },
  tooLong: (line) => invalid(invalidLine(line, "too_long")),
  exit: ({ code, signal, expected, stderr }) => {
    const exitKind = expected ? "killed" : code === 0 ? "graceful" : "crashed"
    const message = stderr.length > 0 && exitKind === "crashed" ? { message: stderr.slice(-2000) } : {}
    return { dir: "local", msg: { kind: "exit", exitKind, exitCode: code, signal, ...message } }
  },
  responseOf: replyOf,
  request: (id, method, params) => ({ jsonrpc: "2.0", id, method, params })
}

export type AcpTransport = JsonRpcPeer<TranscriptEntry>

/**
 * An ACP agent over stdio, in its own process group (kernel `ProviderProcess`): closing the scope
 * ends stdin, then SIGTERMs and finally SIGKILLs the whole group (npm wrappers such as codex-acp
 * otherwise leave their native binary running). Requests wait as long as the agent lives; the
 * session times out those that must answer (`REQUEST_TIMEOUT_MS`).
 */
export const makeAcpTransport = (options: {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string | undefined>>
  /** Counters of the inbound queue (see `readLinesPaced`), for tests. */
  readonly probe?: FlowProbe
}): Effect.Effect<AcpTransport, AdapterError, Scope.Scope> =>
  makeJsonRpcPeer({ ...options, stderrLimitBytes: STDERR_TAIL, dialect: acpDialect })
