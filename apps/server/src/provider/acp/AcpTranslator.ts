import { ItemId, TurnId, type RawNative } from "@planbridge/contracts"
import { lineTooLongMessage } from "../lines.ts"
import { asJson, rawOf, warningDraft } from "../kernel/EventDraft.ts"
import { mergeTodos, stepsOfEntries, stepsOfTodos, type StepsResult } from "./AcpItems.ts"
import * as N from "./AcpNative.ts"
import type { TodosHandler } from "./AcpProfile.ts"
import { resolutionDrafts, type JsonRpcId, type Reply } from "./AcpPending.ts"
import { type StreamKind } from "./AcpTurnItems.ts"
import { definedFields } from "../../util/definedFields.ts"
import { isJsonRpcId } from "../kernel/jsonRpcId.ts"
import { AcpSessionTranslator, decode, type Drafts, type ExitInfo } from "./AcpSessionTranslator.ts"

export type { ExitInfo } from "./AcpSessionTranslator.ts"

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
 * The ACP → canonical mapping as a deterministic state machine: native messages in, event
 * drafts out, no I/O, no clock. The live session and the transcript replayer drive the same
 * instance type, so a recorded transcript reproduces exactly what the live session emitted.
 * This class maps what the agent notifies (session updates, withdrawn requests, invalid lines)
 * and its exit; its base (sessionTranslator.ts) the set-up, modes, turns and requests.
 */
export class AcpTranslator extends AcpSessionTranslator {
  // ---- notifications -------------------------------------------------------------------

  /** Drafts, plus answers owed to agent requests the notification withdrew. */
  notification(
    method: string,
    params: unknown
  ): { readonly drafts: Drafts; readonly replies: ReadonlyArray<{ readonly id: JsonRpcId; readonly reply: Reply }> } {
    const raw = rawOf("acp.notification", method, params)
    if (method === "session/update") return { drafts: this.sessionUpdate(params, raw), replies: [] }
    if (method === "$/cancel_request") return this.withdrawn(params, raw)
    const handler = this.profile.extensionNotifications[method]
    if (handler !== undefined) return { drafts: this.todosUpdate(handler, params, raw).drafts, replies: [] }
    return {
      drafts: [warningDraft("unknown_notification", `unmapped notification ${method}`, raw, { method, params })],
      replies: []
    }
  }

  /** The agent cancelled one of its own requests: it resolves `cancelled` and gets -32800. */
  protected withdrawn(params: unknown, raw: RawNative): ReturnType<AcpTranslator["notification"]> {
    const requestId =
      typeof params === "object" && params !== null ? (params as { requestId?: unknown }).requestId : undefined
    const pending = isJsonRpcId(requestId) ? this.pending.take(requestId) : undefined
    if (pending === undefined) return { drafts: [], replies: [] }
    const drafts = resolutionDrafts(pending, undefined, "cancelled", raw, pending.turnId)
    if (this.turn !== undefined) {
      const flags = this.pending.flags()
      drafts.push(this.state(flags.length > 0 ? "waiting" : "running", flags, raw))
    }
    return {
      drafts,
      replies: [{ id: pending.nativeId, reply: { error: { code: -32800, message: "Request cancelled" } } }]
    }
  }

  protected sessionUpdate(params: unknown, raw: RawNative): Drafts {
    const notification = decode(N.SessionNotification, params)
    const kind = decode(N.SessionUpdate, notification?.update)
    if (notification === undefined || kind === undefined)
      return [warningDraft("update_invalid", "session/update did not decode", raw)]
    const update = notification.update
    switch (kind.sessionUpdate) {
      case "agent_message_chunk":
      case "agent_thought_chunk":
        return this.chunk(
          kind.sessionUpdate === "agent_message_chunk" ? "assistant_text" : "reasoning_text",
          update,
          raw
        )
      case "tool_call":
      case "tool_call_update": {
        const fields = decode(N.ToolCallFields, update)
        return fields === undefined
          ? [warningDraft("update_invalid", `${kind.sessionUpdate} did not decode`, raw)]
          : this.toolCall(fields, raw)
      }
      case "plan": {
        const plan = decode(N.PlanUpdate, update)
        if (plan === undefined) return [warningDraft("update_invalid", "plan did not decode", raw)]
        // A mirror of the todo list that already published this checklist, with ids: a second
        // snapshot without them would replace it (and count as another revision).
        if (this.profile.checklistAuthority === "todos" && this.todosSeen) return []
        return this.planSnapshot(stepsOfEntries(plan.entries), raw)
      }
      case "current_mode_update": {
        const mode = decode(N.CurrentModeUpdate, update)
        return mode === undefined
          ? [warningDraft("update_invalid", "current_mode_update did not decode", raw)]
          : this.modes.change(mode.currentModeId, raw)
      }
      case "config_option_update": {
        const options = decode(N.ConfigOptionUpdate, update)
        return options === undefined
          ? [warningDraft("update_invalid", "config_option_update did not decode", raw)]
          : this.modes.fromConfig(options.configOptions, raw)
      }
      case "user_message_chunk":
        // Our own prompt echoed back (or history on load); the turn already records it.
        if (!this.configured) this.historySkipped += 1
        return []
      case "available_commands_update":
      case "usage_update":
      case "session_info_update":
        // Slash commands, context-window usage and titles have no canonical event yet.
        return []
      default:
        return [warningDraft("unknown_update", `unmapped session update ${kind.sessionUpdate}`, raw)]
    }
  }

  /** Turn-scoped updates need an open turn; history replayed by session/load is counted. */
  protected requireTurn(raw: RawNative, what: string): TurnId | Drafts {
    if (this.turn !== undefined) return this.turn.turnId
    if (!this.configured) {
      this.historySkipped += 1
      return []
    }
    return [warningDraft("outside_turn", `${what} arrived outside a turn`, raw)]
  }

  protected chunk(streamKind: StreamKind, update: unknown, raw: RawNative): Drafts {
    const chunk = decode(N.ChunkUpdate, update)
    if (chunk === undefined) return [warningDraft("update_invalid", "content chunk did not decode", raw)]
    if (chunk.content.type !== "text" || chunk.content.text === undefined) {
      return [warningDraft("unsupported_content", `content of type ${chunk.content.type} is not mapped`, raw)]
    }
    const turnId = this.requireTurn(raw, "a content chunk")
    return typeof turnId === "string" ? this.items.text(turnId, streamKind, chunk.content.text, raw) : turnId
  }

  protected toolCall(update: N.ToolCallFields, raw: RawNative): Drafts {
    const turnId = this.requireTurn(raw, "a tool call")
    return typeof turnId === "string" ? this.items.toolCall(turnId, update, raw) : turnId
  }

  /** The item id of a tool call announced earlier in this turn, for requests that name it. */
  toolItemId(toolCallId: string | undefined): ItemId | undefined {
    return this.items.toolItemId(toolCallId, this.turn?.turnId)
  }

  protected planSnapshot(result: StepsResult, raw: RawNative): Drafts {
    const turnId = this.turn?.turnId ?? this.lastTurnId
    if (turnId === undefined) return [warningDraft("outside_turn", "a plan update arrived before any turn", raw)]
    const out: Drafts = []
    if (!this.capabilities.supportsStructuredPlanUpdates) {
      this.capabilities = { ...this.capabilities, supportsStructuredPlanUpdates: true }
      out.push({ type: "capabilities.changed", raw, payload: { capabilities: this.capabilities } })
    }
    if (result.unknownStatuses.length > 0) {
      out.push(
        warningDraft(
          "plan_status_unknown",
          `unknown step status ${result.unknownStatuses.join(", ")}; kept as pending`,
          raw
        )
      )
    }
    out.push({
      type: "turn.plan.updated",
      turnId,
      raw,
      payload: { plan: { explanation: null, steps: [...result.steps], source: "native" } }
    })
    return out
  }

  protected todosUpdate(
    handler: TodosHandler,
    params: unknown,
    raw: RawNative
  ): { readonly drafts: Drafts; readonly reply: Reply } {
    const decoded = handler.decode(params)
    if (!decoded.ok) {
      return {
        drafts: [warningDraft("request_invalid", `todo update did not decode: ${decoded.error}`, raw, params)],
        reply: { error: { code: -32602, message: "Invalid params" } }
      }
    }
    this.todos = mergeTodos(this.todos, decoded.value.todos, decoded.value.merge)
    this.todosSeen = true
    return { drafts: this.planSnapshot(stepsOfTodos(this.todos), raw), reply: { result: handler.ack(this.todos) } }
  }

  /**
   * A line from the agent that is no JSON-RPC message: reported, with its (bounded) text. One
   * over the line bound is fatal: the transport ends the agent, and the exit says why.
   */
  invalidLine(line: N.InvalidLine): Drafts {
    const raw = rawOf("acp.stdout", undefined, line.text)
    const detail = {
      reason: line.reason,
      bytes: line.bytes,
      truncated: line.truncated,
      ...definedFields({ error: line.error })
    }
    if (line.reason === "too_long") {
      this.fatal = lineTooLongMessage(this.profile.label, line.bytes)
      const payload = { code: "line_too_long", message: this.fatal, fatal: true, detail: asJson(detail) }
      return [{ type: "runtime.error", raw, payload }]
    }
    const message = `the agent wrote a line that is ${invalidLineWhat[line.reason]}; ignored`
    return [warningDraft("invalid_line", message, raw, detail)]
  }

  // ---- the exit ----------------------------------------------------------------------

  exited(info: ExitInfo, raw: RawNative): Drafts {
    const drafts: Drafts = this.items.closeText(this.turn?.turnId)
    for (const p of this.pending.all()) {
      this.pending.take(p.nativeId)
      drafts.push(...resolutionDrafts(p, undefined, "provider_exited", raw, p.turnId))
    }
    if (this.turn !== undefined) {
      drafts.push({
        type: "turn.completed",
        turnId: this.turn.turnId,
        raw,
        payload: { status: "failed", error: { message: this.fatal ?? `the agent exited (${info.exitKind})` } }
      })
      this.turn = undefined
    }
    // Our kill is no crash of the agent's own, but the session did fail: `crashed`, with the cause.
    const fatal = this.fatal
    const payload: ExitInfo =
      fatal === undefined
        ? info
        : { ...info, exitKind: "crashed", message: info.message === undefined ? fatal : `${fatal}\n${info.message}` }
    drafts.push({ type: "session.exited", raw, payload }, this.state("stopped", [], raw))
    return drafts
  }
}
