import type { ItemId, RawNative, ThreadId, TurnId } from "@planbridge/contracts"
import { Option, Schema } from "effect"
import type { TaskEntry } from "./ClaudeChecklist.ts"
import { lineTooLongMessage, MAX_LINE_BYTES } from "../lines.ts"
import { configLayers } from "./ClaudeConfigLayers.ts"
import { canonicalMode, CLAUDE_CAPABILITIES } from "./ClaudeModes.ts"
import { AskUserQuestionInput, ExitPlanModeInput } from "./ClaudeNative.ts"
import { promptFromAskUserQuestion } from "./ClaudePrompts.ts"
import {
  approvalOpened,
  decisionFromResult,
  planOpened,
  questionOpened,
  requestIds,
  requestResolved,
  type EventDraft,
  type OpenRequest,
  type Outcome
} from "./ClaudeRequests.ts"
import { ClaudeStreamItems } from "./ClaudeStream.ts"
import type { CanUseToolResultLine, LocalLine } from "./ClaudeTranscript.ts"
import { definedFields } from "../../util/definedFields.ts"

/**
 * Our side of the Claude SDK, the base of `ClaudeMapper`: the session's state, the local lines
 * (what we sent, decided and saw happen to the CLI) and the native requests they open and close.
 * Deterministic, like the mapper: the same lines always give the same drafts.
 */
export abstract class ClaudeRequestMapper {
  protected mode = "default"
  protected turn: { readonly turnId: TurnId; interrupted: boolean } | undefined
  protected implicitTurns = 0
  protected readonly open = new Map<string, OpenRequest>()
  /** How each closed request ended: the runner hands the CLI exactly this. */
  protected readonly closed = new Map<string, Outcome>()
  protected readonly denied = new Set<string>()
  protected readonly toolUses = new Map<string, { readonly name: string; readonly input: unknown }>()
  protected readonly unpairedCalls: Array<{ readonly toolName: string; readonly toolUseID: string }> = []
  protected readonly stream = new ClaudeStreamItems()
  protected tasks: ReadonlyArray<TaskEntry> = []
  /** The setting sources of a user-mode session, until its first `system/init` reported its MCP servers. */
  protected settingSources: ReadonlyArray<string> | undefined
  protected layersReported = false

  constructor(protected readonly threadId: ThreadId) {}

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

  // ---- our side of the SDK --------------------------------------------------------------------

  protected local(line: LocalLine): ReadonlyArray<EventDraft> {
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

  protected canUseTool(toolName: string, input: unknown, toolUseID: string, raw: RawNative): ReadonlyArray<EventDraft> {
    this.unpairedCalls.push({ toolName, toolUseID })
    if (this.open.has(toolUseID) || this.closed.has(toolUseID)) return []
    if (toolName === "AskUserQuestion") return this.openQuestion(toolUseID, input, raw)
    if (toolName === "ExitPlanMode") return this.openPlan(toolUseID, input, raw, true)
    const request = this.register(toolUseID, toolName, "approval", {})
    return [...approvalOpened(request, input, raw), this.state("waiting", ["waitingOnApproval"], raw)]
  }

  protected canUseToolResult(line: CanUseToolResultLine, raw: RawNative): ReadonlyArray<EventDraft> {
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

  protected register(
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

  protected openQuestion(toolUseID: string, input: unknown, raw: RawNative): ReadonlyArray<EventDraft> {
    const decoded = Schema.decodeUnknownOption(AskUserQuestionInput)(input)
    if (Option.isNone(decoded))
      return [this.warning("claude.malformed_question", "AskUserQuestion input is not a question list", raw)]
    const prompt = promptFromAskUserQuestion(requestIds(this.threadId, toolUseID).promptId, decoded.value)
    const request = this.register(toolUseID, "AskUserQuestion", "question", { prompt })
    return [...questionOpened(request, prompt, raw), this.state("waiting", ["waitingOnUserInput"], raw)]
  }

  protected openPlan(toolUseID: string, input: unknown, raw: RawNative, fromCall: boolean): ReadonlyArray<EventDraft> {
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

  protected resolve(toolUseID: string, outcome: Outcome, raw: RawNative): ReadonlyArray<EventDraft> {
    const request = this.open.get(toolUseID)
    if (request === undefined) return []
    this.open.delete(toolUseID)
    this.closed.set(toolUseID, outcome)
    const drafts = [...requestResolved(request, outcome, raw)]
    if (this.open.size === 0 && this.turn !== undefined && outcome.kind !== "exited")
      drafts.push(this.state("running", [], raw))
    return drafts
  }

  // ---- helpers --------------------------------------------------------------------------------

  /** Output with no turn of ours (should not happen): give it a turn rather than drop it. */
  protected implicitTurn(): TurnId {
    const turnId = `${this.threadId}/implicit-turn/${this.implicitTurns++}` as TurnId
    this.turn = { turnId, interrupted: false }
    return turnId
  }

  protected state(state: "running" | "waiting" | "idle", flags: ReadonlyArray<string>, raw: RawNative): EventDraft {
    return { type: "session.state.changed", raw, payload: { state, flags: [...flags] } }
  }

  protected warning(code: string, message: string, raw: RawNative): EventDraft {
    return { type: "runtime.warning", raw, payload: { code, message } }
  }
}
