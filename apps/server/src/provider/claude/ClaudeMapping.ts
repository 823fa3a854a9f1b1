import type { ItemId, RawNative } from "@planbridge/contracts"
import { Option, Schema } from "effect"
import { applyChecklistResult, CHECKLIST_TOOLS, sameTasks, snapshotOfTasks } from "./ClaudeChecklist.ts"
import { configLayers } from "./ClaudeConfigLayers.ts"
import {
  resolve,
  sessionState,
  turnOf,
  update,
  warning,
  type ClaudeMappingState,
  type ClaudeStepped,
  type Working
} from "./ClaudeMappingState.ts"
import { canonicalMode, CLAUDE_CAPABILITIES } from "./ClaudeModes.ts"
import { UNANSWERED_CAPABILITY } from "./ClaudePrompts.ts"
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
import { mapLocal, openPlan, openQuestion } from "./ClaudeRequestMapping.ts"
import { cancelDecision } from "./ClaudeRequests.ts"
import { finishedBlockId, finishedTextItem, streamEvent } from "./ClaudeStream.ts"
import type { ClaudeLine, SdkMessage } from "./ClaudeTranscript.ts"
import { definedFields } from "../../util/definedFields.ts"
import { withEntry } from "../kernel/immutable.ts"
import { awaitingInTurn, isKnown } from "../kernel/OpenRequests.ts"

/**
 * The pure Claude mapping, the kernel's contract `step(state, line) → {state, drafts, replies}`:
 * a transcript line (an SDK message, or a local line of ours: what we sent, a `canUseTool` call,
 * our decision, the exit) and the state in; the next state, the canonical event drafts, and the
 * receipts owed to waiting `canUseTool` callbacks. The live session and the kernel's `replay`
 * both drive it. Tools are classified by exact name only: `AskUserQuestion` is a prompt,
 * `ExitPlanMode` a proposed plan, `TodoWrite` and `Task*` a checklist; every other tool is an
 * item, with an approval request only when the CLI really calls `canUseTool` for it.
 */
export const step = (state: ClaudeMappingState, line: ClaudeLine): ClaudeStepped => {
  const w: Working = { state, drafts: [], replies: [] }
  if (line.dir === "local") mapLocal(w, line.t, line.msg)
  else mapSdk(w, line.msg)
  return w
}

const mapSdk = (w: Working, message: SdkMessage): void => {
  const subtype = typeof message["subtype"] === "string" ? `/${message["subtype"]}` : ""
  const raw: RawNative = {
    source: "claude.sdk.message",
    method: `${message.type}${subtype}`,
    payload: message as Schema.Json
  }
  const decodeOr = <A>(schema: Schema.Codec<A, unknown>, then: (value: A) => void) => {
    const decoded = Schema.decodeUnknownOption(schema)(message)
    if (Option.isSome(decoded)) then(decoded.value)
    else warning(w, "claude.malformed_message", `unexpected ${raw.method} message`, raw)
  }
  switch (message.type) {
    case "system":
      if (message["subtype"] === "init")
        return decodeOr(SystemInit, (m) => {
          update(w, { unansweredAnnotations: m.capabilities?.includes(UNANSWERED_CAPABILITY) === true })
          modeSeen(w, m.permissionMode, raw)
          layersSeen(w, m, raw)
        })
      if (message["subtype"] === "status")
        return decodeOr(SystemStatus, (m) => {
          if (m.permissionMode !== undefined) modeSeen(w, m.permissionMode, raw)
        })
      return
    case "stream_event":
      // Sub-agent streams interleave with the main one; their finished blocks still arrive as messages.
      if (message["parent_tool_use_id"] !== null && message["parent_tool_use_id"] !== undefined) return
      return decodeOr(StreamEvent, (m) => streamEvent(w, m.event, raw))
    case "assistant":
      return decodeOr(AssistantMessage, (m) => {
        for (const block of m.message.content) assistantBlock(w, m.message.id, m.message.content.length, block, raw)
      })
    case "user":
      return decodeOr(UserMessage, (m) => {
        if (m.isReplay === true || typeof m.message.content === "string") return
        for (const block of m.message.content)
          if (block.type === "tool_result") toolResult(w, block, m.tool_use_result, raw)
      })
    case "result":
      return decodeOr(ResultMessage, (m) => result(w, m, raw))
    default:
      return
  }
}

/** A user-mode session's first `system/init` says which MCP servers it loaded: reported once. */
const layersSeen = (w: Working, init: typeof SystemInit.Type, raw: RawNative): void => {
  const { settingSources, layersReported, mode } = w.state
  if (settingSources === undefined || layersReported) return
  update(w, { layersReported: true })
  const payload = {
    capabilities: CLAUDE_CAPABILITIES,
    mode: canonicalMode(mode),
    nativeMode: mode,
    model: init.model,
    configLayers: configLayers(settingSources, init.mcp_servers ?? [])
  }
  w.drafts.push({ type: "session.configured", raw, payload })
}

const modeSeen = (w: Working, mode: string, raw: RawNative): void => {
  if (mode === w.state.mode) return
  update(w, { mode })
  w.drafts.push({ type: "mode.changed", raw, payload: { mode: canonicalMode(mode), nativeMode: mode } })
}

const assistantBlock = (w: Working, messageId: string, blockCount: number, block: ContentBlock, raw: RawNative) => {
  const itemId = finishedBlockId(w, messageId, blockCount)
  const turnId = turnOf(w)
  const text = finishedTextItem(turnId, itemId, block, raw)
  if (text !== undefined) return void w.drafts.push(text)
  if (block.type !== "tool_use") return
  if (block.id === undefined || block.name === undefined)
    return warning(w, "claude.malformed_tool_use", "tool_use without id or name", raw)
  update(w, { toolUses: withEntry(w.state.toolUses, block.id, { name: block.name, input: block.input }) })
  if (isKnown(w.state.requests, block.id) || w.state.closed.has(block.id)) return
  if (block.name === "AskUserQuestion") return openQuestion(w, block.id, block.input, raw)
  if (block.name === "ExitPlanMode") return openPlan(w, block.id, block.input, raw, false)
  if (CHECKLIST_TOOLS.has(block.name)) return
  w.drafts.push({
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
  })
}

const toolResult = (w: Working, block: ContentBlock, toolUseResult: unknown, raw: RawNative): void => {
  const toolUseID = block.tool_use_id
  const use = toolUseID === undefined ? undefined : w.state.toolUses.get(toolUseID)
  if (toolUseID === undefined || use === undefined) return
  const turnId = turnOf(w)
  const isError = block.is_error === true
  if (use.name === "AskUserQuestion" || use.name === "ExitPlanMode") {
    // Normally resolved already; if the CLI finished the tool without asking us, say so.
    const reason = "the tool finished without an answer from Planbridge"
    const outcome =
      use.name === "AskUserQuestion"
        ? ({ kind: "prompt", resolution: "cancelled", answers: [], reason } as const)
        : ({ kind: "plan", decision: "cancelled" } as const)
    return resolve(w, toolUseID, outcome, raw)
  }
  if (CHECKLIST_TOOLS.has(use.name)) {
    const outcome = applyChecklistResult(w.state.tasks, use.name, use.input, toolUseResult, isError)
    if (outcome.kind === "todos")
      return void w.drafts.push({ type: "turn.plan.updated", turnId, raw, payload: { plan: outcome.snapshot } })
    if (outcome.kind === "malformed") return warning(w, "claude.malformed_checklist", outcome.message, raw)
    if (outcome.kind === "tasks") {
      const changed = !sameTasks(outcome.tasks, w.state.tasks)
      update(w, { tasks: outcome.tasks })
      if (changed) {
        const plan = snapshotOfTasks(outcome.tasks)
        return void w.drafts.push({ type: "turn.plan.updated", turnId, raw, payload: { plan } })
      }
    }
    if (isError) warning(w, "claude.checklist_tool_failed", `${use.name} failed: ${textOf(block.content)}`, raw)
    return
  }
  w.drafts.push({
    type: "item.completed",
    turnId,
    itemId: toolUseID as ItemId,
    raw,
    payload: {
      itemType: itemTypeOf(use.name),
      status: isError ? (w.state.denied.has(toolUseID) ? "declined" : "failed") : "completed",
      toolName: use.name,
      title: use.name,
      text: textOf(block.content),
      ...(toolUseResult !== undefined ? { data: toolUseResult as Schema.Json } : {})
    }
  })
}

const result = (w: Working, message: ResultMessage, raw: RawNative): void => {
  const turn = w.state.turn
  const turnId = turnOf(w)
  // A turn that ends cancels whatever it still waits for (the kernel's rule).
  for (const request of awaitingInTurn(w.state.requests, turnId))
    resolve(w, request.key, cancelDecision(request, "the turn ended"), raw)
  const interrupted =
    message.subtype !== "success" &&
    (message.terminal_reason === "aborted_tools" ||
      message.terminal_reason === "aborted_streaming" ||
      turn?.interrupted === true)
  const status = message.subtype === "success" ? "completed" : interrupted ? "interrupted" : "failed"
  const usage = message.usage
  const error = { message: message.errors?.join("; ") || message.result || message.subtype, code: message.subtype }
  w.drafts.push({
    type: "turn.completed",
    turnId,
    raw,
    payload: {
      status,
      ...(status === "failed" ? { error } : {}),
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
  w.drafts.push(sessionState("idle", [], raw))
  update(w, { turn: undefined })
}
