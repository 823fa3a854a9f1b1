import type { ItemId, RawNative, ThreadId, TurnId } from "@planbridge/contracts"
import { Option, Schema } from "effect"
import { applyChecklistResult, CHECKLIST_TOOLS, sameTasks, snapshotOfTasks, type TaskEntry } from "./ClaudeChecklist.ts"
import { lineTooLongMessage, MAX_LINE_BYTES } from "../lines.ts"
import { configLayers } from "./ClaudeConfigLayers.ts"
import { canonicalMode, CLAUDE_CAPABILITIES } from "./ClaudeModes.ts"
import {
  AskUserQuestionInput,
  AssistantMessage,
  ExitPlanModeInput,
  ResultMessage,
  StreamEvent,
  SystemInit,
  SystemStatus,
  UserMessage,
  itemTypeOf,
  textOf,
  type ContentBlock
} from "./ClaudeNative.ts"
import { promptFromAskUserQuestion } from "./ClaudePrompts.ts"
import {
  approvalOpened,
  cancelDecision,
  decisionFromResult,
  planOpened,
  questionOpened,
  requestIds,
  requestResolved,
  type EventDraft,
  type OpenRequest,
  type Outcome
} from "./ClaudeRequests.ts"
import { ClaudeStreamItems, finishedTextItem } from "./ClaudeStream.ts"
import {
  isLocalLine,
  type CanUseToolResultLine,
  type LocalLine,
  type NativeLine,
  type SdkLine
} from "./ClaudeTranscript.ts"
import { definedFields } from "../../util/definedFields.ts"

export type { EventDraft } from "./ClaudeRequests.ts"

/**
 * Claude transcript lines → canonical event drafts. Deterministic: the same lines always give
 * the same drafts, so the live adapter and `replayTranscript` share it. Tools are classified by
 * exact name only: `AskUserQuestion` is a prompt, `ExitPlanMode` a proposed plan, `TodoWrite`
 * and `Task*` a checklist; every other tool is an item, with an approval request only when the
 * CLI really calls `canUseTool` for it.
 */
export class ClaudeMapper {
  private mode = "default"
  private turn: { readonly turnId: TurnId; interrupted: boolean } | undefined
  private implicitTurns = 0
  private readonly open = new Map<string, OpenRequest>()
  /** How each closed request ended: the runner hands the CLI exactly this. */
  private readonly closed = new Map<string, Outcome>()
  private readonly denied = new Set<string>()
  private readonly toolUses = new Map<string, { readonly name: string; readonly input: unknown }>()
  private readonly unpairedCalls: Array<{ readonly toolName: string; readonly toolUseID: string }> = []
  private readonly stream = new ClaudeStreamItems()
  private tasks: ReadonlyArray<TaskEntry> = []
  /** The setting sources of a user-mode session, until its first `system/init` reported its MCP servers. */
  private settingSources: ReadonlyArray<string> | undefined
  private layersReported = false

  constructor(private readonly threadId: ThreadId) {}

  get nativeMode(): string {
    return this.mode
  }
  get currentTurn(): TurnId | undefined {
    return this.turn?.turnId
  }
  openRequests(): ReadonlyArray<OpenRequest> {
    return [...this.open.values()]
  }
  isOpen(toolUseID: string): boolean {
    return this.open.has(toolUseID)
  }
  /** The recorded end of a request, once it is closed. */
  outcomeOf(toolUseID: string): Outcome | undefined {
    return this.closed.get(toolUseID)
  }
  /** Whether a request for this tool use was ever opened (it may be closed by now). */
  knows(toolUseID: string): boolean {
    return this.open.has(toolUseID) || this.closed.has(toolUseID)
  }
  /** Undoes the `user` line of `turnId`, when its events could not be recorded (it was never sent). */
  abandonTurn(turnId: TurnId): void {
    if (this.turn?.turnId === turnId) this.turn = undefined
  }
  /**
   * Undoes the `decision` line that just closed `request`, when its events could not be
   * recorded: the request is open again, as if the decision never happened.
   */
  reopen(request: OpenRequest): void {
    this.closed.delete(request.toolUseID)
    this.open.set(request.toolUseID, request)
  }

  step(line: NativeLine): ReadonlyArray<EventDraft> {
    return isLocalLine(line) ? this.local(line) : this.sdk(line)
  }

  // ---- our side of the SDK --------------------------------------------------------------------

  private local(line: LocalLine): ReadonlyArray<EventDraft> {
    const raw: RawNative = { source: "claude.sdk.local", method: line._local, payload: line as unknown as Schema.Json }
    switch (line._local) {
      case "start":
        this.mode = line.permissionMode
        this.settingSources = line.settingSources
        return [
          {
            type: "session.started",
            raw,
            payload: { cwd: line.cwd, resumed: line.resumed === true, nativeSessionId: line.sessionId }
          },
          {
            type: "session.configured",
            raw,
            payload: {
              capabilities: CLAUDE_CAPABILITIES,
              mode: canonicalMode(line.permissionMode),
              nativeMode: line.permissionMode,
              model: line.model,
              ...(line.settingSources === undefined ? {} : { configLayers: configLayers(line.settingSources, []) })
            }
          }
        ]
      case "user": {
        const turnId = line.turnId as TurnId
        this.turn = { turnId, interrupted: false }
        return [
          { type: "turn.started", turnId, raw, payload: { mode: canonicalMode(this.mode) } },
          {
            type: "item.completed",
            turnId,
            itemId: `${turnId}/user` as ItemId,
            raw,
            payload: { itemType: "user_message", status: "completed", text: line.text }
          },
          this.state("running", [], raw)
        ]
      }
      case "interrupt":
        if (this.turn !== undefined) this.turn.interrupted = true
        return []
      case "setPermissionMode":
        // The CLI answers with a system/status carrying the mode now in effect; that is the change.
        return []
      case "canUseTool":
        return this.canUseTool(line.toolName, line.input, line.options.toolUseID, raw)
      case "canUseTool-result":
        return this.canUseToolResult(line, raw)
      case "decision":
        return this.resolve(line.toolUseID, line.decision, raw)
      case "lineTooLong":
        return [
          {
            type: "runtime.error",
            raw,
            payload: {
              code: "claude.line_too_long",
              message: lineTooLongMessage("Claude Code", line.bytes),
              fatal: true,
              detail: { bytes: line.bytes, limit: MAX_LINE_BYTES }
            }
          }
        ]
      case "exit": {
        const drafts: Array<EventDraft> = []
        for (const toolUseID of [...this.open.keys()]) drafts.push(...this.resolve(toolUseID, { kind: "exited" }, raw))
        if (this.turn !== undefined) {
          drafts.push({
            type: "turn.completed",
            turnId: this.turn.turnId,
            raw,
            payload: { status: "failed", error: { message: line.message ?? "the Claude Code process exited" } }
          })
          this.turn = undefined
        }
        drafts.push({
          type: "session.exited",
          raw,
          payload: {
            exitKind: line.exitKind,
            exitCode: line.exitCode,
            signal: line.signal,
            ...definedFields({ message: line.message })
          }
        })
        return drafts
      }
    }
  }

  private canUseTool(toolName: string, input: unknown, toolUseID: string, raw: RawNative): ReadonlyArray<EventDraft> {
    this.unpairedCalls.push({ toolName, toolUseID })
    if (this.open.has(toolUseID) || this.closed.has(toolUseID)) return []
    if (toolName === "AskUserQuestion") return this.openQuestion(toolUseID, input, raw)
    if (toolName === "ExitPlanMode") return this.openPlan(toolUseID, input, raw, true)
    const request = this.register(toolUseID, toolName, "approval", {})
    return [...approvalOpened(request, input, raw), this.state("waiting", ["waitingOnApproval"], raw)]
  }

  private canUseToolResult(line: CanUseToolResultLine, raw: RawNative): ReadonlyArray<EventDraft> {
    const index =
      line.toolUseID !== undefined
        ? this.unpairedCalls.findIndex((c) => c.toolUseID === line.toolUseID)
        : this.unpairedCalls.findIndex((c) => c.toolName === line.toolName)
    const toolUseID = line.toolUseID ?? this.unpairedCalls[index]?.toolUseID
    if (index >= 0) this.unpairedCalls.splice(index, 1)
    if (toolUseID === undefined)
      return [this.warning("claude.unpaired_result", `a ${line.toolName} result answers no known call`, raw)]
    if (line.result.behavior === "deny") this.denied.add(toolUseID)
    const request = this.open.get(toolUseID)
    // Our decision line already resolved it (the live path); this derives it for bare recordings.
    if (request === undefined) return []
    return this.resolve(toolUseID, decisionFromResult(request, line.result), raw)
  }

  private register(
    toolUseID: string,
    toolName: string,
    kind: OpenRequest["kind"],
    extra: Partial<OpenRequest>
  ): OpenRequest {
    const request: OpenRequest = {
      toolUseID,
      toolName,
      kind,
      turnId: this.turn?.turnId ?? this.implicitTurn(),
      requestId: requestIds(this.threadId, toolUseID).requestId,
      ...extra
    }
    this.open.set(toolUseID, request)
    return request
  }

  private openQuestion(toolUseID: string, input: unknown, raw: RawNative): ReadonlyArray<EventDraft> {
    const decoded = Schema.decodeUnknownOption(AskUserQuestionInput)(input)
    if (Option.isNone(decoded))
      return [this.warning("claude.malformed_question", "AskUserQuestion input is not a question list", raw)]
    const prompt = promptFromAskUserQuestion(requestIds(this.threadId, toolUseID).promptId, decoded.value)
    const request = this.register(toolUseID, "AskUserQuestion", "question", { prompt })
    return [...questionOpened(request, prompt, raw), this.state("waiting", ["waitingOnUserInput"], raw)]
  }

  private openPlan(toolUseID: string, input: unknown, raw: RawNative, fromCall: boolean): ReadonlyArray<EventDraft> {
    const decoded = Schema.decodeUnknownOption(ExitPlanModeInput)(input)
    if (Option.isNone(decoded)) {
      // The tool use may still lack the plan; the CLI supplies it in the canUseTool input.
      return fromCall ? [this.warning("claude.malformed_plan", "ExitPlanMode carries no plan text", raw)] : []
    }
    const { planId } = requestIds(this.threadId, toolUseID)
    const request = this.register(toolUseID, "ExitPlanMode", "plan", { planId, planMarkdown: decoded.value.plan })
    return [
      ...planOpened(request, planId, decoded.value.plan, decoded.value.planFilePath, raw),
      this.state("waiting", ["waitingOnApproval"], raw)
    ]
  }

  private resolve(toolUseID: string, outcome: Outcome, raw: RawNative): ReadonlyArray<EventDraft> {
    const request = this.open.get(toolUseID)
    if (request === undefined) return []
    this.open.delete(toolUseID)
    this.closed.set(toolUseID, outcome)
    const drafts = [...requestResolved(request, outcome, raw)]
    if (this.open.size === 0 && this.turn !== undefined && outcome.kind !== "exited")
      drafts.push(this.state("running", [], raw))
    return drafts
  }

  // ---- the SDK message stream -----------------------------------------------------------------

  private sdk(message: SdkLine): ReadonlyArray<EventDraft> {
    const subtype = typeof message["subtype"] === "string" ? `/${message["subtype"]}` : ""
    const { _t: _ignored, ...payload } = message
    const raw: RawNative = {
      source: "claude.sdk.message",
      method: `${message.type}${subtype}`,
      payload: payload as Schema.Json
    }
    const decodeOr = <A>(schema: Schema.Codec<A, unknown>, then: (value: A) => ReadonlyArray<EventDraft>) => {
      const decoded = Schema.decodeUnknownOption(schema)(message)
      return Option.isSome(decoded)
        ? then(decoded.value)
        : [this.warning("claude.malformed_message", `unexpected ${raw.method} message`, raw)]
    }
    switch (message.type) {
      case "system":
        if (message["subtype"] === "init")
          return decodeOr(SystemInit, (m) => [...this.modeSeen(m.permissionMode, raw), ...this.layersSeen(m, raw)])
        if (message["subtype"] === "status")
          return decodeOr(SystemStatus, (m) =>
            m.permissionMode !== undefined ? this.modeSeen(m.permissionMode, raw) : []
          )
        return []
      case "stream_event":
        // Sub-agent streams interleave with the main one; their finished blocks still arrive as messages.
        if (message["parent_tool_use_id"] !== null && message["parent_tool_use_id"] !== undefined) return []
        return decodeOr(StreamEvent, (m) =>
          this.stream.event(m.event, () => this.turn?.turnId ?? this.implicitTurn(), raw)
        )
      case "assistant":
        return decodeOr(AssistantMessage, (m) =>
          m.message.content.flatMap((block) => this.assistantBlock(m.message.id, m.message.content.length, block, raw))
        )
      case "user":
        return decodeOr(UserMessage, (m) =>
          m.isReplay === true || typeof m.message.content === "string"
            ? []
            : m.message.content.flatMap((block) =>
                block.type === "tool_result" ? this.toolResult(block, m.tool_use_result, raw) : []
              )
        )
      case "result":
        return decodeOr(ResultMessage, (m) => this.result(m, raw))
      default:
        return []
    }
  }

  /** A user-mode session's first `system/init` says which MCP servers it loaded: reported once. */
  private layersSeen(init: typeof SystemInit.Type, raw: RawNative): ReadonlyArray<EventDraft> {
    if (this.settingSources === undefined || this.layersReported) return []
    this.layersReported = true
    const payload = {
      capabilities: CLAUDE_CAPABILITIES,
      mode: canonicalMode(this.mode),
      nativeMode: this.mode,
      model: init.model,
      configLayers: configLayers(this.settingSources, init.mcp_servers ?? [])
    }
    return [{ type: "session.configured", raw, payload }]
  }

  private modeSeen(mode: string, raw: RawNative): ReadonlyArray<EventDraft> {
    if (mode === this.mode) return []
    this.mode = mode
    return [{ type: "mode.changed", raw, payload: { mode: canonicalMode(mode), nativeMode: mode } }]
  }

  private assistantBlock(
    messageId: string,
    blockCount: number,
    block: ContentBlock,
    raw: RawNative
  ): ReadonlyArray<EventDraft> {
    const itemId = this.stream.finishedBlockId(messageId, blockCount)
    const turnId = this.turn?.turnId ?? this.implicitTurn()
    const text = finishedTextItem(turnId, itemId, block, raw)
    if (text !== undefined) return [text]
    if (block.type !== "tool_use") return []
    if (block.id === undefined || block.name === undefined)
      return [this.warning("claude.malformed_tool_use", "tool_use without id or name", raw)]
    this.toolUses.set(block.id, { name: block.name, input: block.input })
    if (this.open.has(block.id) || this.closed.has(block.id)) return []
    if (block.name === "AskUserQuestion") return this.openQuestion(block.id, block.input, raw)
    if (block.name === "ExitPlanMode") return this.openPlan(block.id, block.input, raw, false)
    if (CHECKLIST_TOOLS.has(block.name)) return []
    return [
      {
        type: "item.started",
        turnId,
        itemId: block.id as ItemId,
        raw,
        payload: {
          itemType: itemTypeOf(block.name),
          status: "inProgress",
          toolName: block.name,
          title: block.name,
          data: (block.input ?? null) as Schema.Json
        }
      }
    ]
  }

  private toolResult(block: ContentBlock, toolUseResult: unknown, raw: RawNative): ReadonlyArray<EventDraft> {
    const toolUseID = block.tool_use_id
    const use = toolUseID === undefined ? undefined : this.toolUses.get(toolUseID)
    if (toolUseID === undefined || use === undefined) return []
    const turnId = this.turn?.turnId ?? this.implicitTurn()
    const isError = block.is_error === true
    if (use.name === "AskUserQuestion" || use.name === "ExitPlanMode") {
      // Normally resolved already; if the CLI finished the tool without asking us, say so.
      const reason = "the tool finished without an answer from Planbridge"
      return this.resolve(
        toolUseID,
        use.name === "AskUserQuestion"
          ? { kind: "prompt", resolution: "cancelled", answers: [], reason }
          : { kind: "plan", decision: "cancelled" },
        raw
      )
    }
    if (CHECKLIST_TOOLS.has(use.name)) {
      const outcome = applyChecklistResult(this.tasks, use.name, use.input, toolUseResult, isError)
      if (outcome.kind === "todos")
        return [{ type: "turn.plan.updated", turnId, raw, payload: { plan: outcome.snapshot } }]
      if (outcome.kind === "malformed") return [this.warning("claude.malformed_checklist", outcome.message, raw)]
      if (outcome.kind === "tasks" && !sameTasks(outcome.tasks, this.tasks)) {
        this.tasks = outcome.tasks
        return [{ type: "turn.plan.updated", turnId, raw, payload: { plan: snapshotOfTasks(outcome.tasks) } }]
      }
      if (outcome.kind === "tasks") this.tasks = outcome.tasks
      return isError
        ? [this.warning("claude.checklist_tool_failed", `${use.name} failed: ${textOf(block.content)}`, raw)]
        : []
    }
    return [
      {
        type: "item.completed",
        turnId,
        itemId: toolUseID as ItemId,
        raw,
        payload: {
          itemType: itemTypeOf(use.name),
          status: isError ? (this.denied.has(toolUseID) ? "declined" : "failed") : "completed",
          toolName: use.name,
          title: use.name,
          text: textOf(block.content),
          ...(toolUseResult !== undefined ? { data: toolUseResult as Schema.Json } : {})
        }
      }
    ]
  }

  private result(message: ResultMessage, raw: RawNative): ReadonlyArray<EventDraft> {
    const turn = this.turn
    const turnId = turn?.turnId ?? this.implicitTurn()
    const drafts: Array<EventDraft> = []
    // A turn that ends cancels whatever it still waits for.
    for (const request of [...this.open.values()].filter((r) => r.turnId === turnId)) {
      drafts.push(...this.resolve(request.toolUseID, cancelDecision(request, "the turn ended"), raw))
    }
    const interrupted =
      message.subtype !== "success" &&
      (message.terminal_reason === "aborted_tools" ||
        message.terminal_reason === "aborted_streaming" ||
        turn?.interrupted === true)
    const status = message.subtype === "success" ? "completed" : interrupted ? "interrupted" : "failed"
    const usage = message.usage
    drafts.push({
      type: "turn.completed",
      turnId,
      raw,
      payload: {
        status,
        ...(status === "failed"
          ? {
              error: { message: message.errors?.join("; ") || message.result || message.subtype, code: message.subtype }
            }
          : {}),
        ...(usage !== undefined
          ? {
              usage: {
                ...definedFields({ inputTokens: usage.input_tokens }),
                ...definedFields({ outputTokens: usage.output_tokens }),
                ...(typeof usage.cache_read_input_tokens === "number"
                  ? { cachedInputTokens: usage.cache_read_input_tokens }
                  : {})
              }
            }
          : {}),
        ...definedFields({ durationMs: message.duration_ms })
      }
    })
    drafts.push(this.state("idle", [], raw))
    this.turn = undefined
    return drafts
  }

  // ---- helpers --------------------------------------------------------------------------------

  /** Output with no turn of ours (should not happen): give it a turn rather than drop it. */
  private implicitTurn(): TurnId {
    const turnId = `${this.threadId}/implicit-turn/${this.implicitTurns++}` as TurnId
    this.turn = { turnId, interrupted: false }
    return turnId
  }

  private state(state: "running" | "waiting" | "idle", flags: ReadonlyArray<string>, raw: RawNative): EventDraft {
    return { type: "session.state.changed", raw, payload: { state, flags: [...flags] } }
  }

  private warning(code: string, message: string, raw: RawNative): EventDraft {
    return { type: "runtime.warning", raw, payload: { code, message } }
  }
}
