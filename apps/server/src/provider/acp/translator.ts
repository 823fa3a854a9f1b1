import {
  ItemId,
  TurnId,
  type OperatingMode,
  type ProviderCapabilities,
  type RawNative,
  type SessionExited
} from "@planbridge/contracts"
import { Exit, Schema } from "effect"
import { lineTooLongMessage } from "../lines.ts"
import { asJson, rawOf, warningDraft, type EventDraft } from "../kernel/EventDraft.ts"
import { turnCompletion, mergeTodos, stepsOfEntries, stepsOfTodos, type StepsResult } from "./items.ts"
import * as N from "./native.ts"
import { elicitationForm } from "./elicitation.ts"
import { ModeState, type ModeRequest } from "./modes.ts"
import type { AcpProfile, TodoPatch, TodosHandler } from "./profile.ts"
import {
  cancelReply,
  PendingRequests,
  resolutionDrafts,
  type JsonRpcId,
  type Reply,
  type RequestOutput
} from "./pending.ts"
import { TurnItems, type StreamKind } from "./turnItems.ts"
import { definedFields } from "../../util/definedFields.ts"
import { isJsonRpcId } from "../kernel/jsonRpcId.ts"

type Drafts = Array<EventDraft>

export type ExitInfo = (typeof SessionExited.Type)["payload"]

const decode = <S extends Schema.Codec<unknown, unknown>>(schema: S, input: unknown): S["Type"] | undefined => {
  const exit = Schema.decodeUnknownExit(schema)(input)
  return Exit.isSuccess(exit) ? exit.value : undefined
}

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
 */
export class AcpTranslator {
  capabilities: ProviderCapabilities
  nativeSessionId: string | undefined
  readonly pending: PendingRequests
  private readonly modes: ModeState
  private configured = false
  private historySkipped = 0
  private turn: { readonly turnId: TurnId } | undefined
  private lastTurnId: TurnId | undefined
  private turnSeq = 0
  private readonly items = new TurnItems()
  private todos: ReadonlyArray<TodoPatch> = []
  /** A todo list extension has been decoded in this session (see `AcpProfile.checklistAuthority`). */
  private todosSeen = false
  /** Why the session is ending, when it was the client's doing (a line over the bound). */
  private fatal: string | undefined

  constructor(
    readonly profile: AcpProfile,
    private readonly idPrefix: string
  ) {
    this.capabilities = profile.capabilities
    this.pending = new PendingRequests(idPrefix)
    this.modes = new ModeState(profile)
  }

  get mode(): OperatingMode {
    return this.modes.mode
  }

  get activeTurnId(): TurnId | undefined {
    return this.turn?.turnId
  }

  nextTurnId(): TurnId {
    this.turnSeq += 1
    return TurnId.make(`${this.idPrefix}:turn:${this.turnSeq}`)
  }

  // ---- session set-up ------------------------------------------------------------------

  configure(initialize: unknown, setup: unknown, info: { readonly cwd: string; readonly resumed: boolean }): Drafts {
    const init = decode(N.InitializeResponse, initialize)
    const session = decode(N.SessionSetup, setup)
    const raw = rawOf("acp.response", info.resumed ? "session/load" : "session/new", setup)
    if (session === undefined) {
      return [warningDraft("session_setup_invalid", "session/new or session/load response did not decode", raw, setup)]
    }
    if (session.sessionId !== undefined) this.nativeSessionId = session.sessionId
    this.modes.read(session.modes ?? undefined, session.configOptions ?? undefined)
    const offered = this.modes.capabilities()
    // A later session can load this one only if the agent announced `session/load`.
    const loadable = init?.agentCapabilities?.loadSession === true
    this.capabilities = { ...offered, supportsResume: offered.supportsResume && loadable }
    this.configured = true
    const started: Drafts[number] = {
      type: "session.started",
      raw: rawOf("acp.response", "initialize", initialize),
      payload: {
        cwd: info.cwd,
        resumed: info.resumed,
        ...definedFields({ nativeSessionId: this.nativeSessionId }),
        ...(init?.agentInfo?.version === undefined ? {} : { providerVersion: init.agentInfo.version })
      }
    }
    const out: Drafts = [
      started,
      {
        type: "session.configured",
        raw,
        payload: {
          capabilities: this.capabilities,
          mode: this.modes.mode,
          ...definedFields({ nativeMode: this.modes.nativeMode }),
          model: this.model(session.configOptions ?? undefined)
        }
      }
    ]
    if (this.historySkipped > 0) {
      out.push(
        warningDraft(
          "history_not_mapped",
          `${this.historySkipped} history updates replayed by session/load were not mapped`,
          raw
        )
      )
    }
    out.push(this.state("idle", [], raw))
    return out
  }

  private model(configOptions: ReadonlyArray<N.ConfigOption> | undefined): string | null {
    const value = configOptions?.find((o) => o.category === "model")?.currentValue
    return typeof value === "string" ? value : null
  }

  /** The request that switches to a canonical mode; undefined if the session offers none. */
  modeRequest(mode: OperatingMode): ModeRequest | undefined {
    return this.nativeSessionId === undefined ? undefined : this.modes.request(this.nativeSessionId, mode)
  }

  /** The agent accepted a mode switch; some agents echo an update, some do not. */
  modeSet(method: string, nativeMode: string, response: unknown): Drafts {
    const raw = rawOf("acp.response", method, response)
    const options = decode(N.ConfigOptionUpdate, response)
    if (options !== undefined) return this.modes.fromConfig(options.configOptions, raw)
    return this.modes.change(nativeMode, raw)
  }

  private state(
    state: "idle" | "running" | "waiting" | "stopped",
    flags: ReadonlyArray<string>,
    raw: RawNative
  ): EventDraft {
    return { type: "session.state.changed", raw, payload: { state, flags: [...flags] } }
  }

  // ---- turns ---------------------------------------------------------------------------

  startTurn(turnId: TurnId, mode: OperatingMode | undefined, prompt: unknown): Drafts {
    this.turn = { turnId }
    this.items.startTurn()
    this.lastTurnId = turnId
    const raw = rawOf("acp.request", "session/prompt", prompt)
    return [
      { type: "turn.started", turnId, raw, payload: mode === undefined ? {} : { mode } },
      this.state("running", [], raw)
    ]
  }

  promptFinished(
    outcome: { readonly result: unknown } | { readonly error: { readonly message: string; readonly code?: number } }
  ): {
    readonly drafts: Drafts
    readonly replies: ReadonlyArray<{ readonly id: JsonRpcId; readonly reply: Reply }>
  } {
    const turn = this.turn
    const raw = rawOf("acp.response", "session/prompt", "result" in outcome ? outcome.result : { error: outcome.error })
    if (turn === undefined)
      return {
        drafts: [warningDraft("prompt_without_turn", "session/prompt finished with no turn open", raw)],
        replies: []
      }
    const drafts: Drafts = this.items.closeText(turn.turnId)
    // The agent stopped waiting: whatever it still asked is cancelled, on both sides.
    const replies = this.pending.inTurn(turn.turnId).map((p) => {
      this.pending.take(p.nativeId)
      const reply = cancelReply(p)
      drafts.push(...resolutionDrafts(p, reply, "cancelled", raw, turn.turnId))
      return { id: p.nativeId, reply }
    })
    this.turn = undefined
    if ("error" in outcome) {
      const error =
        outcome.error.code === undefined
          ? { message: outcome.error.message }
          : { message: outcome.error.message, code: String(outcome.error.code) }
      drafts.push({ type: "turn.completed", turnId: turn.turnId, raw, payload: { status: "failed", error } })
    } else {
      const response = decode(N.PromptResponse, outcome.result)
      if (response === undefined) {
        drafts.push({
          type: "turn.completed",
          turnId: turn.turnId,
          raw,
          payload: { status: "failed", error: { message: "session/prompt response did not decode" } }
        })
      } else {
        drafts.push({ type: "turn.completed", turnId: turn.turnId, raw, payload: turnCompletion(response) })
      }
    }
    drafts.push(this.state("idle", [], raw))
    return { drafts, replies }
  }

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
  private withdrawn(params: unknown, raw: RawNative): ReturnType<AcpTranslator["notification"]> {
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

  private sessionUpdate(params: unknown, raw: RawNative): Drafts {
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
  private requireTurn(raw: RawNative, what: string): TurnId | Drafts {
    if (this.turn !== undefined) return this.turn.turnId
    if (!this.configured) {
      this.historySkipped += 1
      return []
    }
    return [warningDraft("outside_turn", `${what} arrived outside a turn`, raw)]
  }

  private chunk(streamKind: StreamKind, update: unknown, raw: RawNative): Drafts {
    const chunk = decode(N.ChunkUpdate, update)
    if (chunk === undefined) return [warningDraft("update_invalid", "content chunk did not decode", raw)]
    if (chunk.content.type !== "text" || chunk.content.text === undefined) {
      return [warningDraft("unsupported_content", `content of type ${chunk.content.type} is not mapped`, raw)]
    }
    const turnId = this.requireTurn(raw, "a content chunk")
    return typeof turnId === "string" ? this.items.text(turnId, streamKind, chunk.content.text, raw) : turnId
  }

  private toolCall(update: N.ToolCallFields, raw: RawNative): Drafts {
    const turnId = this.requireTurn(raw, "a tool call")
    return typeof turnId === "string" ? this.items.toolCall(turnId, update, raw) : turnId
  }

  /** The item id of a tool call announced earlier in this turn, for requests that name it. */
  toolItemId(toolCallId: string | undefined): ItemId | undefined {
    return this.items.toolItemId(toolCallId, this.turn?.turnId)
  }

  private planSnapshot(result: StepsResult, raw: RawNative): Drafts {
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

  private todosUpdate(
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

  // ---- requests ------------------------------------------------------------------------

  request(id: JsonRpcId, method: string, params: unknown): RequestOutput {
    const raw = rawOf("acp.request", method, params)
    const turnId = this.turn?.turnId
    if (method === "session/request_permission") {
      const decoded = decode(N.RequestPermission, params)
      if (decoded === undefined)
        return this.refuse(method, params, raw, "request_invalid", "session/request_permission did not decode", -32602)
      const itemId = this.toolItemId(decoded.toolCall.toolCallId)
      return this.withWaiting(this.pending.openPermission(id, method, decoded, raw, turnId ?? this.lastTurnId, itemId))
    }
    const handler = method === "elicitation/create" ? elicitationForm : this.profile.extensionRequests[method]
    if (handler === undefined) {
      return this.refuse(method, params, raw, "unknown_request", `unsupported agent request ${method}`, -32601)
    }
    if (handler.kind === "todos") return this.todosUpdate(handler, params, raw)
    const opened =
      handler.kind === "question"
        ? this.pending.openQuestion(id, method, handler, params, raw, turnId)
        : this.pending.openPlan(id, method, handler, params, raw, turnId ?? this.lastTurnId)
    return this.withWaiting(opened)
  }

  private refuse(
    method: string,
    params: unknown,
    raw: RawNative,
    code: string,
    message: string,
    rpcCode: number
  ): RequestOutput {
    return {
      drafts: [warningDraft(code, message, raw, { method, params })],
      reply: { error: { code: rpcCode, message: rpcCode === -32601 ? `Method not found: ${method}` : message } }
    }
  }

  private withWaiting(output: RequestOutput): RequestOutput {
    if (output.reply !== undefined) return output
    const flags = this.pending.flags()
    return {
      drafts: [
        ...output.drafts,
        this.state("waiting", flags, output.drafts[0]?.raw ?? rawOf("planbridge", undefined, null))
      ]
    }
  }

  /** The client's answer to an agent request, exactly as written to the wire. */
  clientResponse(id: JsonRpcId, reply: Reply): Drafts {
    const pending = this.pending.take(id)
    if (pending === undefined) return []
    const raw = rawOf("acp.client-response", pending.method, "result" in reply ? reply.result : { error: reply.error })
    const drafts = resolutionDrafts(pending, reply, undefined, raw, this.turn?.turnId ?? pending.turnId)
    if (this.turn !== undefined) {
      const flags = this.pending.flags()
      drafts.push(this.state(flags.length > 0 ? "waiting" : "running", flags, raw))
    }
    return drafts
  }

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
