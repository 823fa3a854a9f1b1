import { Exit, Schema } from "effect"
import { rawOf, type EventDraft } from "../kernel/EventDraft.ts"
import { isJsonRpcId, jsonRpcIdKey, type JsonRpcId } from "../kernel/jsonRpcId.ts"
import type { TranscriptEntry } from "../kernel/transcript.ts"
import { InvalidLine } from "./AcpNative.ts"
import type { Reply } from "./AcpPending.ts"
import { protocolError, replyOf } from "./AcpAgentLines.ts"
import type { AcpTranslator } from "./AcpTranslator.ts"

/**
 * The ACP mapping, one `step` over the kernel's transcript lines, driven alike by the live
 * session (kernel `SessionRunner`) and by `replay`: `in` lines are JSON-RPC messages from the
 * agent, `out` lines ours to it (requests, notifications, our answers), `local` lines
 * `{kind:"invalid",…InvalidLine}` (an agent line that is no message) and
 * `{kind:"exit",exitKind,exitCode,signal}`. The translator holds the session's state and is
 * changed in place (its answers' rollback is `pending.restore`); replies are JSON-RPC messages
 * owed to the agent, written only after the line's events are recorded.
 */

export const AcpLocal = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("invalid"), ...InvalidLine.fields }),
  Schema.Struct({
    kind: Schema.Literal("exit"),
    exitKind: Schema.Literals(["graceful", "crashed", "killed", "server_restarted"]),
    exitCode: Schema.NullOr(Schema.Finite),
    signal: Schema.NullOr(Schema.String),
    /** The agent's stderr tail when it crashed (live only; transcripts omit it). */
    message: Schema.optionalKey(Schema.String)
  })
])
export type AcpLocal = typeof AcpLocal.Type
const decodeLocal = Schema.decodeUnknownExit(AcpLocal)

export interface AcpMappingState {
  readonly translator: AcpTranslator
  /** Our requests by JSON-RPC id, until the agent's response to each. */
  readonly outbound: Map<string, { readonly method: string; readonly params: unknown }>
  /** The agent's `initialize` result, once it came (the session set-up reads it). */
  initialize: unknown
}

export interface AcpStepped {
  readonly state: AcpMappingState
  readonly drafts: ReadonlyArray<EventDraft>
  /** JSON-RPC messages owed to the agent. */
  readonly replies: ReadonlyArray<unknown>
}

export const makeAcpMappingState = (translator: AcpTranslator): AcpMappingState => ({
  translator,
  outbound: new Map(),
  initialize: undefined
})

/** Our answer to an agent request as the JSON-RPC message written. */
export const replyMessage = (id: JsonRpcId | null, reply: Reply) => ({
  jsonrpc: "2.0" as const,
  id,
  ...("result" in reply ? { result: reply.result } : { error: reply.error })
})

type JsonObject = Readonly<Record<string, unknown>>
const isRecord = (u: unknown): u is JsonObject => typeof u === "object" && u !== null
const paramOf = (params: unknown, key: string): unknown => (isRecord(params) ? params[key] : undefined)
const answers = (replies: ReadonlyArray<{ readonly id: JsonRpcId; readonly reply: Reply }>) =>
  replies.map(({ id, reply }) => replyMessage(id, reply))

/** The agent's response to a request of ours, at its place in the stream. */
const responded = (state: AcpMappingState, request: { method: string; params: unknown }, reply: Reply) => {
  const { translator } = state
  if (request.method === "initialize" && "result" in reply) state.initialize = reply.result
  if (request.method === "session/prompt") {
    const finished = translator.promptFinished(
      "result" in reply ? reply : { error: { message: reply.error.message, code: reply.error.code } }
    )
    return { drafts: finished.drafts, replies: answers(finished.replies) }
  }
  if (!("result" in reply)) return { drafts: [], replies: [] }
  switch (request.method) {
    case "session/new":
    case "session/load": {
      const resumed = request.method === "session/load"
      const setup =
        resumed && isRecord(reply.result)
          ? { ...reply.result, sessionId: paramOf(request.params, "sessionId") }
          : reply.result
      const cwd = String(paramOf(request.params, "cwd") ?? "")
      return { drafts: translator.configure(state.initialize, setup, { cwd, resumed }), replies: [] }
    }
    case "session/set_mode":
    case "session/set_config_option": {
      const nativeMode = paramOf(request.params, request.method === "session/set_mode" ? "modeId" : "value")
      const drafts = typeof nativeMode === "string" ? translator.modeSet(request.method, nativeMode, reply.result) : []
      return { drafts, replies: [] }
    }
  }
  return { drafts: [], replies: [] }
}

/** An agent message: its request, notification, or response to one of ours. */
const inbound = (state: AcpMappingState, msg: JsonObject): Omit<AcpStepped, "state"> => {
  const { translator } = state
  const id = isJsonRpcId(msg.id) ? msg.id : undefined
  if (typeof msg.method === "string") {
    if (id === undefined) {
      const out = translator.notification(msg.method, msg.params)
      return { drafts: out.drafts, replies: answers(out.replies) }
    }
    const out = translator.request(id, msg.method, msg.params)
    const opened = translator.pending.all().some((p) => p.nativeId === id)
    const reply = out.reply ?? (opened ? undefined : { error: { code: -32603, message: "Internal error" } })
    return { drafts: out.drafts, replies: reply === undefined ? [] : [replyMessage(id, reply)] }
  }
  const response = replyOf(msg)
  const request = response === undefined ? undefined : state.outbound.get(jsonRpcIdKey(response.id))
  if (response === undefined || request === undefined) return { drafts: [], replies: [] }
  state.outbound.delete(jsonRpcIdKey(response.id))
  return responded(state, request, response.reply)
}

/** A message of ours: a request is remembered (a prompt starts its turn), an answer resolves its request. */
const outbound = (state: AcpMappingState, msg: JsonObject): ReadonlyArray<EventDraft> => {
  const { translator } = state
  if (!isJsonRpcId(msg.id)) return []
  if (typeof msg.method !== "string") {
    const reply: Reply =
      "error" in msg ? { error: msg.error as Extract<Reply, { error: unknown }>["error"] } : { result: msg.result }
    return translator.clientResponse(msg.id, reply)
  }
  state.outbound.set(jsonRpcIdKey(msg.id), { method: msg.method, params: msg.params })
  return msg.method === "session/prompt"
    ? translator.startTurn(translator.nextTurnId(), translator.mode, msg.params)
    : []
}

const local = (translator: AcpTranslator, local: AcpLocal): Omit<AcpStepped, "state"> => {
  if (local.kind === "invalid") {
    const { kind: _kind, ...line } = local
    // Answered as the SDK did (JSON-RPC: an error with a `null` id). A response is never
    // answered; a line over the bound ends the agent (its group is being killed).
    const replies = line.reason === "unknown_response" || line.reason === "too_long" ? [] : [protocolError(line)]
    return { drafts: translator.invalidLine(line), replies }
  }
  const { kind: _kind, exitCode, signal, ...info } = local
  const raw = rawOf("planbridge", "process.exit", { code: exitCode, signal })
  return { drafts: translator.exited({ ...info, exitCode, signal }, raw), replies: [] }
}

/** Why a line cannot be mapped, for a replay to name; `undefined` when it can. */
export const unmappable = (line: TranscriptEntry): string | undefined => {
  if (line.dir !== "local") return isRecord(line.msg) ? undefined : "msg is not a JSON-RPC object"
  const decoded = decodeLocal(line.msg)
  return Exit.isFailure(decoded) ? `not an ACP local line: ${String(decoded.cause)}` : undefined
}

/** One line through the mapping (lines `unmappable` refuses map to nothing). */
export const step = (state: AcpMappingState, line: TranscriptEntry): AcpStepped => {
  const { msg } = line
  if (line.dir === "local") {
    const decoded = decodeLocal(msg)
    return {
      state,
      ...(Exit.isSuccess(decoded) ? local(state.translator, decoded.value) : { drafts: [], replies: [] })
    }
  }
  if (!isRecord(msg)) return { state, drafts: [], replies: [] }
  return line.dir === "in" ? { state, ...inbound(state, msg) } : { state, drafts: outbound(state, msg), replies: [] }
}
