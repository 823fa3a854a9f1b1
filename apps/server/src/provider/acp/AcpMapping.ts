import { Result, Schema } from "effect"
import { asJson, rawOf } from "../kernel/EventDraft.ts"
import { withEntry, withoutEntry } from "../kernel/immutable.ts"
import { decodedOr, mapped, stepped, warned } from "../kernel/Mapped.ts"
import { lineTooLongMessage } from "../lines.ts"
import { isJsonRpcId, jsonRpcIdKey } from "../kernel/jsonRpcId.ts"
import type { TranscriptEntry } from "../kernel/transcript.ts"
import * as N from "./AcpNative.ts"
import { replyMessage } from "./AcpRequestAnswer.ts"
import { agentRequest } from "./AcpRequestOpen.ts"
import { clientResponse, elicitationComplete, withdrawn } from "./AcpRequestResolve.ts"
import type { AcpState, Mapped } from "./AcpState.ts"
import { exited, responded, startTurn } from "./AcpTurns.ts"
import { notification } from "./AcpUpdates.ts"
import type { Stepped } from "../kernel/SessionRunner.ts"

/**
 * The ACP mapping, one pure `step(state, line) → {state, drafts, replies}` over the kernel's
 * transcript lines, driven alike by the live session (kernel `SessionRunner`) and by `replay`:
 * `in` lines are JSON-RPC messages from the agent, `out` lines ours to it (requests,
 * notifications, our answers), `local` lines `{kind:"invalid",…InvalidLine}` (an agent line
 * that is no message) and `{kind:"exit",exitKind,exitCode,signal}`. The state (AcpState.ts) is
 * never changed in place; replies are JSON-RPC messages owed to the agent, written only after
 * the line's events are recorded.
 */

export const AcpLocal = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("invalid"), ...N.InvalidLine.fields }),
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

/** A line mapped: the next state, its event drafts, the JSON-RPC messages owed to the agent. */
type AcpStepped = Stepped<AcpState, unknown>

/** An agent message: its request, notification, or response to one of ours. */
const inbound = (s: AcpState, msg: N.JsonObject): AcpStepped => {
  if (typeof msg.method === "string") {
    if (!isJsonRpcId(msg.id)) {
      // A request's end, from the agent: withdrawn, or its URL flow done (the request's life: Open → Answer → Resolve).
      const raw = rawOf("acp.notification", msg.method, msg.params)
      if (msg.method === "$/cancel_request") return stepped(withdrawn(s, msg.params, raw))
      if (msg.method === "elicitation/complete") return stepped(elicitationComplete(s, msg.params, raw))
      return stepped(notification(s, msg.method, msg.params, raw))
    }
    const asked = agentRequest(s, msg.id, msg.method, msg.params)
    return stepped(asked, asked.reply === undefined ? [] : [replyMessage(msg.id, asked.reply)])
  }
  const response = N.replyOf(msg)
  const key = response === undefined ? "" : jsonRpcIdKey(response.id)
  const request = s.outbound.get(key)
  if (response === undefined || request === undefined) return stepped(mapped(s))
  return stepped(responded({ ...s, outbound: withoutEntry(s.outbound, key) }, request, response))
}

/** A message of ours: a request is remembered (a prompt starts its turn), an answer resolves its request. */
const outbound = (s: AcpState, msg: N.JsonObject): Mapped => {
  const reply = N.replyOf(msg)
  if (reply !== undefined) return clientResponse(s, reply.id, reply)
  if (!isJsonRpcId(msg.id) || typeof msg.method !== "string") return mapped(s)
  const next = {
    ...s,
    outbound: withEntry(s.outbound, jsonRpcIdKey(msg.id), { method: msg.method, params: msg.params })
  }
  return msg.method === "session/prompt" ? startTurn(next, msg.params) : mapped(next)
}

/** What an invalid line was, in words, by its reason. */
const invalidLineWhat: Readonly<Record<N.InvalidLineReason, string>> = {
  not_json: "not JSON (garbled or cut off)",
  batch: "a JSON-RPC batch, which ACP does not use",
  not_object: "a JSON value but not an object",
  not_jsonrpc: "not a JSON-RPC 2.0 request, notification or response",
  too_long: "longer than the line bound",
  unknown_response: "a response to no request of the client's (an unknown, null or missing id)"
}

/**
 * A line from the agent that is no JSON-RPC message: reported, with its (bounded) text. One
 * over the line bound is fatal: the transport ends the agent, and the exit says why.
 */
export const invalidLine = (s: AcpState, line: N.InvalidLine): Mapped => {
  // What it was, without its text (the raw payload carries that).
  const { text, ...detail } = line
  const raw = rawOf("acp.stdout", undefined, text)
  if (line.reason === "too_long") {
    const fatal = lineTooLongMessage(s.profile.label, line.bytes)
    const payload = { code: "line_too_long", message: fatal, fatal: true, detail: asJson(detail) }
    return mapped({ ...s, fatal }, { type: "runtime.error", raw, payload })
  }
  const message = `the agent wrote a line that is ${invalidLineWhat[line.reason]}; ignored`
  return warned(s, "invalid_line", message, raw, detail)
}

/** The answer the SDK gave a line that is no message (JSON-RPC: an error with a `null` id); kept as it was. */
const protocolError = (line: N.InvalidLine) =>
  replyMessage(null, {
    error:
      line.reason === "not_json"
        ? { code: -32700, message: "Parse error" }
        : line.reason === "batch"
          ? { code: -32600, message: "Invalid request: JSON-RPC batches are not supported" }
          : { code: -32600, message: "Invalid request" }
  })

const local = (s: AcpState, local: AcpLocal): AcpStepped => {
  if (local.kind === "invalid") {
    const { kind: _kind, ...line } = local
    // Answered as the SDK did (JSON-RPC: an error with a `null` id). A response is never
    // answered; a line over the bound ends the agent (its group is being killed).
    const unanswered = line.reason === "unknown_response" || line.reason === "too_long"
    return stepped(invalidLine(s, line), unanswered ? [] : [protocolError(line)])
  }
  const { kind: _kind, exitCode, signal, ...info } = local
  const raw = rawOf("planbridge", "process.exit", { code: exitCode, signal })
  return stepped(exited(s, { ...info, exitCode, signal }, raw))
}

/** The line, if the mapping can read it; else why not, for a replay to name. */
export const mappable = (line: TranscriptEntry): Result.Result<TranscriptEntry, string> => {
  if (line.dir !== "local")
    return N.isRecord(line.msg) ? Result.succeed(line) : Result.fail("msg is not a JSON-RPC object")
  const failed = (why: string): Result.Result<TranscriptEntry, string> => Result.fail(`not an ACP local line: ${why}`)
  return decodedOr(AcpLocal, failed)(line.msg, () => Result.succeed(line))
}

/** One line through the mapping (lines not `mappable` map to nothing). */
export const step = (state: AcpState, line: TranscriptEntry): AcpStepped => {
  const { msg } = line
  if (line.dir === "local") {
    return stepped(decodedOr(AcpLocal, () => mapped(state))(msg, (l) => local(state, l)))
  }
  if (!N.isRecord(msg)) return stepped(mapped(state))
  return line.dir === "in" ? inbound(state, msg) : stepped(outbound(state, msg))
}
