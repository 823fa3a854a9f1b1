import type { Effect, Scope } from "effect"
import type { FlowProbe } from "../inbound.ts"
import { isJsonRpcId } from "../kernel/jsonRpcId.ts"
import type { AdapterError } from "../AdapterError.ts"
import { makeJsonRpcPeer, type JsonRpcDialect, type JsonRpcPeer } from "../kernel/JsonRpcPeer.ts"
import type { TranscriptEntry } from "../kernel/transcript.ts"
import type { InvalidLine } from "./AcpNative.ts"
import { decodeAgentLine, invalidLine, replyOf } from "./AcpAgentLines.ts"

/** How much of the agent's stderr is kept (its tail). */
const STDERR_TAIL = 8192

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
  responseOf: (msg) => {
    const response = replyOf(msg)
    return response === undefined ? undefined : { id: response.id, ...response.reply }
  },
  request: (id, method, params) => ({ jsonrpc: "2.0", id, method, params }),
  answered: "mapped"
}

export type AcpTransport = JsonRpcPeer<TranscriptEntry>

/**
 * An ACP agent over stdio, in its own process group (kernel `ProviderProcess`): closing the scope
 * ends stdin, then SIGTERMs and finally SIGKILLs the whole group (npm wrappers such as codex-acp
 * otherwise leave their native binary running). Requests wait as long as the agent lives; the
 * session times out those that must answer (`requestTimeoutMs`).
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
