import type { ItemId, RawNative } from "@planbridge/contracts"
import { Option, Schema } from "effect"
import { applyChecklistResult, CHECKLIST_TOOLS, sameTasks, snapshotOfTasks } from "./ClaudeChecklist.ts"
import { configLayers } from "./ClaudeConfigLayers.ts"
import { canonicalMode, CLAUDE_CAPABILITIES } from "./ClaudeModes.ts"
import {
  AssistantMessage,
  ResultMessage,
  StreamEvent,
  SystemInit,
  SystemStatus,
  UserMessage,
  itemTypeOf,
  textOf,
  type ContentBlock
} from "./ClaudeNative.ts"
import { cancelDecision, type EventDraft } from "./ClaudeRequests.ts"
import { finishedTextItem } from "./ClaudeStream.ts"
import { isLocalLine, type NativeLine, type SdkLine } from "./ClaudeTranscript.ts"
import { definedFields } from "../../util/definedFields.ts"
import { ClaudeRequestMapper } from "./ClaudeRequestMapping.ts"

export type { EventDraft } from "./ClaudeRequests.ts"

/**
 * The mapping contract every provider shares (`step(state, line) → {state, drafts, replies}`),
 * for Claude: the mapper keeps its state in place, and the SDK is answered through the
 * `canUseTool` callbacks that wait on our `decision` lines, so there are no replies.
 */
export const step = (mapper: ClaudeMapper, line: NativeLine) => ({
  state: mapper,
  drafts: mapper.step(line),
  replies: [] as ReadonlyArray<never>
})

/**
 * Claude transcript lines → canonical event drafts. Deterministic: the same lines always give
 * the same drafts, so the live adapter and the kernel's `replay` share it. Tools are classified by
 * exact name only: `AskUserQuestion` is a prompt, `ExitPlanMode` a proposed plan, `TodoWrite`
 * and `Task*` a checklist; every other tool is an item, with an approval request only when the
 * CLI really calls `canUseTool` for it.
 */
export class ClaudeMapper extends ClaudeRequestMapper {
  step(line: NativeLine): ReadonlyArray<EventDraft> {
    return isLocalLine(line) ? this.local(line) : this.sdk(line)
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
}
