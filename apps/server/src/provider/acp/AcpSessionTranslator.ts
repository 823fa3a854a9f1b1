import {
  ItemId,
  TurnId,
  type OperatingMode,
  type ProviderCapabilities,
  type RawNative,
  type SessionExited
} from "@planbridge/contracts"
import { Exit, Schema } from "effect"
import { rawOf, warningDraft, type EventDraft } from "../kernel/EventDraft.ts"
import { turnCompletion } from "./AcpItems.ts"
import * as N from "./AcpNative.ts"
import { elicitationForm } from "./AcpElicitation.ts"
import { ModeState, type ModeRequest } from "./AcpModes.ts"
import type { AcpProfile, TodoPatch, TodosHandler } from "./AcpProfile.ts"
import {
  cancelReply,
  PendingRequests,
  resolutionDrafts,
  type JsonRpcId,
  type Reply,
  type RequestOutput
} from "./AcpPending.ts"
import { TurnItems } from "./AcpTurnItems.ts"
import { definedFields } from "../../util/definedFields.ts"

export type Drafts = Array<EventDraft>

export type ExitInfo = (typeof SessionExited.Type)["payload"]

export const decode = <S extends Schema.Codec<unknown, unknown>>(schema: S, input: unknown): S["Type"] | undefined => {
  const exit = Schema.decodeUnknownExit(schema)(input)
  return Exit.isSuccess(exit) ? exit.value : undefined
}

/**
 * The ACP session's translator, its base: the session's state, set-up, modes, turns, the agent's
 * requests and our replies. `AcpTranslator` adds what the agent notifies, and its exit.
 */
export abstract class AcpSessionTranslator {
  /** The item of a tool call in the current turn (the subclass tracks tool calls). */
  abstract toolItemId(toolCallId: string | undefined): ItemId | undefined
  /** A checklist the agent sent through a request (the subclass maps checklists). */
  protected abstract todosUpdate(
    handler: TodosHandler,
    params: unknown,
    raw: RawNative
  ): { readonly drafts: Drafts; readonly reply: Reply }

  capabilities: ProviderCapabilities
  nativeSessionId: string | undefined
  readonly pending: PendingRequests
  protected readonly modes: ModeState
  protected configured = false
  protected historySkipped = 0
  protected turn: { readonly turnId: TurnId } | undefined
  protected lastTurnId: TurnId | undefined
  protected turnSeq = 0
  protected readonly items = new TurnItems()
  protected todos: ReadonlyArray<TodoPatch> = []
  /** A todo list extension has been decoded in this session (see `AcpProfile.checklistAuthority`). */
  protected todosSeen = false
  /** Why the session is ending, when it was the client's doing (a line over the bound). */
  protected fatal: string | undefined

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

  protected model(configOptions: ReadonlyArray<N.ConfigOption> | undefined): string | null {
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

  protected state(
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

  protected refuse(
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

  protected withWaiting(output: RequestOutput): RequestOutput {
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
}
