import type { Effect, Scope } from "effect"
import type { AdapterError } from "../AdapterError.ts"
import { LINE_HEAD_BYTES, utf8Head } from "../lines.ts"
import {
  makeJsonRpcPeer,
  type JsonRpcDialect,
  type JsonRpcPeer,
  type JsonRpcPeerOptions
} from "../kernel/JsonRpcPeer.ts"
import { messageLine, type CodexLine } from "./CodexLine.ts"

/**
 * The `codex app-server` dialect of the kernel's JSON-RPC peer (no `"jsonrpc"` field): a message
 * is classified once, as it is read (`messageLine`), a line that is not JSON is a `local`
 * `unreadable` line with its reason, one over the bound a `local` `tooLong` line with its head,
 * the exit a `local` `exit` line; a response completes its request once the session mapped it,
 * from the line's own classification.
 */
const codexDialect: JsonRpcDialect<CodexLine> = {
  read: (line) => {
    const text = line.data.toString("utf8")
    if (text.trim().length === 0) return undefined
    try {
      return messageLine("in", JSON.parse(text))
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      return { dir: "local", msg: { kind: "unreadable", line: text, reason } }
    }
  },
  tooLong: (line) => ({
    dir: "local",
    msg: { kind: "tooLong", head: utf8Head(line.data, LINE_HEAD_BYTES), bytes: line.bytes }
  }),
  exit: ({ code, signal, expected }) => ({ dir: "local", msg: { kind: "exit", code, signal, expected } }),
  responseOf: (_msg, line) => {
    if (line.dir !== "in" || line.message.type !== "response") return undefined
    const { id, result, error } = line.message
    return error !== undefined ? { id, error } : { id, result }
  },
  request: (id, method, params) => ({ id, method, params })
}

/** Our `initialize` (a session's and the auth probe's): the experimental API on, for collaboration modes and questions. */
export const CODEX_INITIALIZE = {
  clientInfo: { name: "planbridge", title: "Planbridge", version: "0.1.0" },
  capabilities: { experimentalApi: true }
} as const

/** Codex's app-server over stdio; requests time out after `requestTimeoutMs` (30 s by default). */
export const makeCodexTransport = (
  options: Omit<JsonRpcPeerOptions<CodexLine>, "dialect" | "env"> & { readonly env: Readonly<Record<string, string>> }
): Effect.Effect<JsonRpcPeer<CodexLine>, AdapterError, Scope.Scope> =>
  makeJsonRpcPeer({ ...options, requestTimeoutMs: options.requestTimeoutMs ?? 30_000, dialect: codexDialect })
