import type { ItemId, RawNative } from "@planbridge/contracts"
import { Schema } from "effect"
import { applyChecklistResult, CHECKLIST_TOOLS, sameTasks, stepsOfTasks } from "./ClaudeChecklist.ts"
import { configLayers } from "./ClaudeConfigLayers.ts"
import { ElicitationComplete, elicitationCompleted } from "./ClaudeElicitation.ts"
import { resolve, turnOf, type ClaudeMappingState, type ClaudeReceipt, type Mapped } from "./ClaudeMappingState.ts"
import { canonicalMode, CLAUDE_CAPABILITIES } from "./ClaudeModes.ts"
import { UNANSWERED_CAPABILITY } from "./ClaudePrompts.ts"
import {
  AssistantMessage,
  ResultMessage,
  StreamEvent,
  SystemInit,
  SystemStatus,
  UserMessage,
  toolItemOf,
  textOf,
  type ContentBlock
} from "./ClaudeNative.ts"
import { mapLocal, openPlan, openQuestion } from "./ClaudeRequestMapping.ts"
import { cancelDecision } from "./ClaudeRequests.ts"
import { finishedBlockId, finishedTextItem, streamEvent } from "./ClaudeStream.ts"
import type { ClaudeLine, SdkMessage } from "./ClaudeTranscript.ts"
import { definedFields } from "../../util/definedFields.ts"
import { asJson, rawOf, type EventDraft } from "../kernel/EventDraft.ts"
import { withEntry } from "../kernel/immutable.ts"
import { awaitingInTurn, isKnown } from "../kernel/OpenRequests.ts"
import { type Stepped } from "../kernel/SessionRunner.ts"
import { andThen, chain, decodedOr, each, mapped, sessionStateDraft, stepped, warned } from "../kernel/Mapped.ts"
import { checklistDraft } from "../kernel/TurnDrafts.ts"

/**
 * The pure Claude mapping, the kernel's contract `step(state, line) → {state, drafts, replies}`:
 * a transcript line (an SDK message, or a local line of ours: what we sent, a `canUseTool` call,
 * our decision, the exit) and the state in; the next state, the canonical event drafts, and the
 * receipts owed to waiting `canUseTool` callbacks. The live session and the kernel's `replay`
 * both drive it. Tools are classified by exact name only: `AskUserQuestion` is a prompt,
 * `ExitPlanMode` a proposed plan, `TodoWrite` and `Task*` a checklist; every other tool is an
 * item, with an approval request only when the CLI really calls `canUseTool` for it.
 */
export const step = (state: ClaudeMappingState, line: ClaudeLine): Stepped<ClaudeMappingState, ClaudeReceipt> =>
  stepped(line.dir === "local" ? mapLocal(state, line.t, line.msg) : mapSdk(state, line.msg))

const mapSdk = (s: ClaudeMappingState, message: SdkMessage): Mapped => {
  const subtype = typeof message["subtype"] === "string" ? `/${message["subtype"]}` : ""
  const raw = rawOf("claude.sdk.message", `${message.type}${subtype}`, message)
  const malformed = () => warned(s, "claude.malformed_message", `unexpected ${raw.method} message`, raw)
  const decodeOr = <S extends Schema.Decoder<unknown>>(schema: S, then: (value: S["Type"]) => Mapped): Mapped =>
    decodedOr(schema, malformed)(message, then)
  switch (message.type) {
    case "system":
      if (message["subtype"] === "init")
        return decodeOr(SystemInit, (m) =>
          chain(
            { ...s, unansweredAnnotations: m.capabilities?.includes(UNANSWERED_CAPABILITY) === true },
            (next) => modeSeen(next, m.permissionMode, raw),
            (next) => layersSeen(next, m, raw)
          )
        )
      if (message["subtype"] === "status")
        return decodeOr(SystemStatus, (m) =>
          m.permissionMode !== undefined ? modeSeen(s, m.permissionMode, raw) : mapped(s)
        )
      if (message["subtype"] === "elicitation_complete")
        return decodeOr(ElicitationComplete, (m) => elicitationCompleted(s, m.elicitation_id, raw))
      return mapped(s)
    case "stream_event":
      // Sub-agent streams interleave with the main one; their finished blocks still arrive as messages.
      if (message["parent_tool_use_id"] !== null && message["parent_tool_use_id"] !== undefined) return mapped(s)
      return decodeOr(StreamEvent, (m) => streamEvent(s, m.event, raw))
    case "assistant":
      return decodeOr(AssistantMessage, (m) =>
        each(s, m.message.content, (next, block) =>
          assistantBlock(next, m.message.id, m.message.content.length, block, raw)
        )
      )
    case "user":
      return decodeOr(UserMessage, (m) => {
        if (m.isReplay === true || typeof m.message.content === "string") return mapped(s)
        const results = m.message.content.filter((block) => block.type === "tool_result")
        return each(s, results, (next, block) => toolResult(next, block, m.tool_use_result, raw))
      })
    case "result":
      return decodeOr(ResultMessage, (m) => result(s, m, raw))
    default:
      return mapped(s)
  }
}

/** A user-mode session's first `system/init` says which MCP servers it loaded: reported once. */
const layersSeen = (s: ClaudeMappingState, init: typeof SystemInit.Type, raw: RawNative): Mapped => {
  const { settingSources, mode } = s
  if (settingSources === undefined) return mapped(s)
  const payload = {
    capabilities: CLAUDE_CAPABILITIES,
    mode: canonicalMode(mode),
    nativeMode: mode,
    model: init.model,
    configLayers: configLayers(settingSources, init.mcp_servers ?? [])
  }
  return mapped({ ...s, settingSources: undefined }, { type: "session.configured", raw, payload })
}

const modeSeen = (s: ClaudeMappingState, mode: string, raw: RawNative): Mapped =>
  mode === s.mode
    ? mapped(s)
    : mapped({ ...s, mode }, { type: "mode.changed", raw, payload: { mode: canonicalMode(mode), nativeMode: mode } })

const assistantBlock = (
  s0: ClaudeMappingState,
  messageId: string,
  blockCount: number,
  block: ContentBlock,
  raw: RawNative
): Mapped => {
  const { state: s1, itemId } = finishedBlockId(s0, messageId, blockCount)
  const { state: s, turnId } = turnOf(s1)
  const text = finishedTextItem(turnId, itemId, block, raw)
  if (text !== undefined) return mapped(s, text)
  if (block.type !== "tool_use") return mapped(s)
  if (block.id === undefined || block.name === undefined)
    return warned(s, "claude.malformed_tool_use", "tool_use without id or name", raw)
  const state = { ...s, toolUses: withEntry(s.toolUses, block.id, { name: block.name, input: block.input }) }
  if (isKnown(state.requests, block.id) || state.closed.has(block.id)) return mapped(state)
  if (block.name === "AskUserQuestion") return openQuestion(state, block.id, block.input, raw)
  if (block.name === "ExitPlanMode") return openPlan(state, block.id, block.input, raw, false)
  if (CHECKLIST_TOOLS.has(block.name)) return mapped(state)
  return mapped(state, {
    type: "item.started",
    turnId,
    itemId: block.id as ItemId,
    raw,
    payload: { ...toolItemOf(block.name), status: "inProgress", data: asJson(block.input) }
  })
}

const toolResult = (s0: ClaudeMappingState, block: ContentBlock, toolUseResult: unknown, raw: RawNative): Mapped => {
  const toolUseID = block.tool_use_id
  const use = toolUseID === undefined ? undefined : s0.toolUses.get(toolUseID)
  if (toolUseID === undefined || use === undefined) return mapped(s0)
  const { state: s, turnId } = turnOf(s0)
  const isError = block.is_error === true
  if (use.name === "AskUserQuestion" || use.name === "ExitPlanMode") {
    // Normally resolved already; if the CLI finished the tool without asking us, say so.
    const request = s.requests.get(toolUseID)
    if (request === undefined) return mapped(s)
    return resolve(s, toolUseID, cancelDecision(request, "the tool finished without an answer from Planbridge"), raw)
  }
  if (CHECKLIST_TOOLS.has(use.name)) {
    const outcome = applyChecklistResult(s.tasks, use.name, use.input, toolUseResult, isError)
    if (outcome.kind === "todos") return mapped(s, checklistDraft(turnId, outcome.steps, "tool-derived", raw))
    if (outcome.kind === "malformed") return warned(s, "claude.malformed_checklist", outcome.message, raw)
    if (outcome.kind === "tasks") {
      // A failed call changes nothing (`unchanged`), so a task list is never an error's.
      const state = { ...s, tasks: outcome.tasks }
      if (sameTasks(outcome.tasks, s.tasks)) return mapped(state)
      return mapped(state, checklistDraft(turnId, stepsOfTasks(outcome.tasks), "tool-derived", raw))
    }
    if (!isError) return mapped(s)
    return warned(s, "claude.checklist_tool_failed", `${use.name} failed: ${textOf(block.content)}`, raw)
  }
  return mapped(s, {
    type: "item.completed",
    turnId,
    itemId: toolUseID as ItemId,
    raw,
    payload: {
      ...toolItemOf(use.name),
      status: isError ? (s.denied.has(toolUseID) ? "declined" : "failed") : "completed",
      text: textOf(block.content),
      ...(toolUseResult !== undefined ? { data: asJson(toolUseResult) } : {})
    }
  })
}

const result = (s0: ClaudeMappingState, message: ResultMessage, raw: RawNative): Mapped => {
  const { state: s, turnId } = turnOf(s0)
  const interrupted =
    message.terminal_reason === "aborted_tools" ||
    message.terminal_reason === "aborted_streaming" ||
    s.turn?.interrupted === true
  const status = message.subtype === "success" ? "completed" : interrupted ? "interrupted" : "failed"
  const usage = message.usage
  const error = { message: message.errors?.join("; ") || message.result || message.subtype, code: message.subtype }
  const completed: EventDraft = {
    type: "turn.completed",
    turnId,
    raw,
    payload: {
      status,
      ...(status === "failed" ? { error } : {}),
      ...(usage !== undefined
        ? {
            usage: definedFields({
              inputTokens: usage.input_tokens,
              outputTokens: usage.output_tokens,
              cachedInputTokens: usage.cache_read_input_tokens ?? undefined
            })
          }
        : {}),
      ...definedFields({ durationMs: message.duration_ms })
    }
  }
  // A turn that ends cancels whatever it still waits for (the kernel's rule).
  const cancelled = each(s, awaitingInTurn(s.requests, turnId), (next, request) =>
    resolve(next, request.key, cancelDecision(request, "the turn ended"), raw)
  )
  return andThen(cancelled, (next) =>
    mapped({ ...next, turn: undefined }, completed, sessionStateDraft("idle", [], raw))
  )
}
