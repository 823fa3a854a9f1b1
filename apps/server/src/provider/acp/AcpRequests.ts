import type { RawNative } from "@planbridge/contracts"
import { asJson, rawOf, warningDraft, type EventDraft } from "../kernel/EventDraft.ts"
import type { JsonRpcId } from "../kernel/jsonRpcId.ts"
import { noOpenRequests } from "../kernel/OpenRequests.ts"
import { lineTooLongMessage } from "../lines.ts"
import { definedFields } from "../../util/definedFields.ts"
import { elicitationForm } from "./AcpElicitation.ts"
import * as N from "./AcpNative.ts"
import { openPermission, openPlan, openQuestion, type Asked, type Opened } from "./AcpPending.ts"
import { resolutionDrafts } from "./AcpPendingResolution.ts"
import type { Reply } from "./AcpPending.ts"
import { decode, pendingFlags, stateDraft, takePending, turnStateDrafts, withPending } from "./AcpState.ts"
import type { AcpState, ExitInfo, Mapped } from "./AcpState.ts"
import { closeText, toolItemId } from "./AcpTurnItems.ts"
import { urlOpened } from "./AcpUrlElicitation.ts"
import { todosUpdate } from "./AcpUpdates.ts"

/** The agent's requests, our answers to them, its unreadable lines and its exit, pure. */

/** What an invalid line was, in words, by its reason. */
const invalidLineWhat: Readonly<Record<N.InvalidLineReason, string>> = {
  not_json: "not JSON (garbled or cut off)",
  batch: "a JSON-RPC batch, which ACP does not use",
  not_object: "a JSON value but not an object",
  not_jsonrpc: "not a JSON-RPC 2.0 request, notification or response",
  too_long: "longer than the line bound",
  unknown_response: "a response to no request of the client's (an unknown, null or missing id)"
}

/** An agent request: opened (the session waits on it), or answered at once with `reply`. */
export const agentRequest = (
  s: AcpState,
  id: JsonRpcId,
  method: string,
  params: unknown
): Mapped & { readonly reply?: Reply } => {
  const raw = rawOf("acp.request", method, params)
  const asked = (turnId = s.turnId): Asked => ({ idPrefix: s.idPrefix, id, method, params, raw, turnId })
  const refuse = (code: string, message: string, rpcCode: number) => ({
    state: s,
    drafts: [warningDraft(code, message, raw, { method, params })],
    reply: { error: { code: rpcCode, message: rpcCode === -32601 ? `Method not found: ${method}` : message } }
  })
  if (method === "session/request_permission") {
    const decoded = decode(N.RequestPermission, params)
    if (decoded === undefined) return refuse("request_invalid", "session/request_permission did not decode", -32602)
    const toolCallId = decoded.toolCall.toolCallId
    const itemId = toolItemId(s.items, toolCallId, s.turnId)
    const toolInput = itemId === undefined ? undefined : s.items.tools.get(toolCallId)?.fields.rawInput
    return waiting(
      s,
      openPermission(asked(s.turnId ?? s.lastTurnId), decoded, { itemId, toolInput, proposed: s.proposed })
    )
  }
  const handler = method === "elicitation/create" ? elicitationForm : s.profile.extensionRequests[method]
  if (handler === undefined) return refuse("unknown_request", `unsupported agent request ${method}`, -32601)
  if (handler.kind === "todos") return todosUpdate(s, handler, params, raw)
  return waiting(
    s,
    handler.kind === "question" ? openQuestion(asked(), handler) : openPlan(asked(s.turnId ?? s.lastTurnId), handler)
  )
}

/** An opened request makes the session wait on it; one that cannot be shown is answered now. */
const waiting = (s: AcpState, opened: Opened): Mapped & { readonly reply?: Reply } => {
  if ("reply" in opened) return { state: s, drafts: opened.drafts, reply: opened.reply }
  const state = withPending(opened.proposed === undefined ? s : { ...s, proposed: opened.proposed }, opened.pending)
  const raw = opened.drafts[0]?.raw ?? rawOf("planbridge", undefined, null)
  return { state, drafts: [...opened.drafts, stateDraft("waiting", pendingFlags(state), raw)] }
}

/** Our answer to an agent request, exactly as written to the wire: it stops pending. */
export const clientResponse = (s: AcpState, id: JsonRpcId, reply: Reply): Mapped => {
  const { state, pending: p } = takePending(s, id)
  if (p === undefined) return { state: s, drafts: [] }
  const raw = rawOf("acp.client-response", p.method, "result" in reply ? reply.result : { error: reply.error })
  const opened = urlOpened(s, p, reply, raw)
  if (opened !== undefined) return opened
  const drafts = resolutionDrafts(p, reply, undefined, raw, s.turnId ?? p.turnId)
  return { state, drafts: [...drafts, ...turnStateDrafts(state, raw)] }
}

/**
 * A line from the agent that is no JSON-RPC message: reported, with its (bounded) text. One
 * over the line bound is fatal: the transport ends the agent, and the exit says why.
 */
export const invalidLine = (s: AcpState, line: N.InvalidLine): Mapped => {
  const raw = rawOf("acp.stdout", undefined, line.text)
  const detail = {
    reason: line.reason,
    bytes: line.bytes,
    truncated: line.truncated,
    ...definedFields({ error: line.error })
  }
  if (line.reason === "too_long") {
    const fatal = lineTooLongMessage(s.profile.label, line.bytes)
    const payload = { code: "line_too_long", message: fatal, fatal: true, detail: asJson(detail) }
    return { state: { ...s, fatal }, drafts: [{ type: "runtime.error", raw, payload }] }
  }
  const message = `the agent wrote a line that is ${invalidLineWhat[line.reason]}; ignored`
  return { state: s, drafts: [warningDraft("invalid_line", message, raw, detail)] }
}

/** The agent's exit: open requests resolve `provider_exited`, an open turn fails, the session stops. */
export const exited = (s: AcpState, info: ExitInfo, raw: RawNative): Mapped => {
  // A session that never started (its set-up failed: a refused `session/load`, a failed
  // handshake) published nothing; its start's error says what happened, and an exit on the
  // thread would tell of a session that never was (one per failed resume).
  if (!s.configured) return { state: s, drafts: [] }
  const closed = closeText(s.items, s.turnId)
  const drafts: Array<EventDraft> = [...closed.drafts]
  for (const p of s.pending.values()) drafts.push(...resolutionDrafts(p, undefined, "provider_exited", raw, p.turnId))
  if (s.turnId !== undefined) {
    const error = { message: s.fatal ?? `the agent exited (${info.exitKind})` }
    drafts.push({ type: "turn.completed", turnId: s.turnId, raw, payload: { status: "failed", error } })
  }
  // Our kill is no crash of the agent's own, but the session did fail: `crashed`, with the cause.
  const fatal = s.fatal
  const payload: ExitInfo =
    fatal === undefined
      ? info
      : { ...info, exitKind: "crashed", message: info.message === undefined ? fatal : `${fatal}\n${info.message}` }
  drafts.push({ type: "session.exited", raw, payload }, stateDraft("stopped", [], raw))
  return { state: { ...s, items: closed.items, pending: noOpenRequests(), turnId: undefined }, drafts }
}
