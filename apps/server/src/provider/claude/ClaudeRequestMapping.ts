import type { ItemId, RawNative, TurnId } from "@planbridge/contracts"
import { Option, Schema } from "effect"
import { lineTooLongMessage, MAX_LINE_BYTES } from "../lines.ts"
import { configLayers } from "./ClaudeConfigLayers.ts"
import { receipt, resolve, sessionState, turnOf, update, warning, type Working } from "./ClaudeMappingState.ts"
import { canonicalMode, CLAUDE_CAPABILITIES } from "./ClaudeModes.ts"
import { AskUserQuestionInput, ExitPlanModeInput } from "./ClaudeNative.ts"
import { promptFromAskUserQuestion } from "./ClaudePrompts.ts"
import {
  approvalOpened,
  decisionFromResult,
  planOpened,
  questionOpenedDrafts,
  requestIds,
  type ClaudeRequest
} from "./ClaudeRequests.ts"
import type { CanUseToolResultLine, ClaudeLocal } from "./ClaudeTranscript.ts"
import { definedFields } from "../../util/definedFields.ts"
import { ELICITATION_TOOL, elicitationPrompt } from "./ClaudeElicitation.ts"
import { withMember } from "../kernel/immutable.ts"
import { isKnown, withOpened } from "../kernel/OpenRequests.ts"

/**
 * Our side of the Claude SDK, pure: the local lines (what we sent, decided and saw happen to the
 * CLI) and the native requests they open and close. A `canUseTool` call is a line; its callback
 * waits for the receipt this mapping replies once the request is closed (by our decision line,
 * the turn's end, an interrupt or the exit) — at once if it is closed already or cannot open.
 */

/** The raw payload of a local line: its kind as `_local` and its time, then its fields. */
const localRaw = (t: number, { kind, ...fields }: ClaudeLocal): RawNative => ({
  source: "claude.sdk.local",
  method: kind,
  payload: { _local: kind, t, ...fields } as Schema.Json
})

export const mapLocal = (w: Working, t: number, line: ClaudeLocal): void => {
  const raw = localRaw(t, line)
  switch (line.kind) {
    case "start":
      update(w, { mode: line.permissionMode, settingSources: line.settingSources })
      w.drafts.push(
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
      )
      return
    case "user": {
      const turnId = line.turnId as TurnId
      update(w, { turn: { turnId, interrupted: false } })
      w.drafts.push(
        { type: "turn.started", turnId, raw, payload: { mode: canonicalMode(w.state.mode) } },
        {
          type: "item.completed",
          turnId,
          itemId: `${turnId}/user` as ItemId,
          raw,
          payload: { itemType: "user_message", status: "completed", text: line.text }
        },
        sessionState("running", [], raw)
      )
      return
    }
    case "interrupt":
      if (w.state.turn !== undefined) update(w, { turn: { ...w.state.turn, interrupted: true } })
      return
    case "setPermissionMode":
      // The CLI answers with a system/status carrying the mode now in effect; that is the change.
      return
    case "canUseTool":
      return canUseTool(w, line.toolName, line.input, line.options.toolUseID, raw)
    case "canUseTool-result":
      return canUseToolResult(w, line, raw)
    case "elicitation":
      return openElicitation(w, line.key, line.request, raw)
    case "elicitation-result":
      return
    case "decision":
      return resolve(w, line.toolUseID, line.decision, raw)
    case "lineTooLong": {
      const message = lineTooLongMessage("Claude Code", line.bytes)
      const detail = { bytes: line.bytes, limit: MAX_LINE_BYTES }
      w.drafts.push({
        type: "runtime.error",
        raw,
        payload: { code: "claude.line_too_long", message, fatal: true, detail }
      })
      return
    }
    case "exit": {
      for (const toolUseID of [...w.state.requests.keys()]) resolve(w, toolUseID, { kind: "exited" }, raw)
      const turn = w.state.turn
      if (turn !== undefined) {
        const error = { message: line.message ?? "the Claude Code process exited" }
        w.drafts.push({ type: "turn.completed", turnId: turn.turnId, raw, payload: { status: "failed", error } })
        update(w, { turn: undefined })
      }
      const { exitKind, exitCode, signal } = line
      const payload = { exitKind, exitCode, signal, ...definedFields({ message: line.message }) }
      w.drafts.push({ type: "session.exited", raw, payload })
      return
    }
  }
}

const canUseTool = (w: Working, toolName: string, input: unknown, toolUseID: string, raw: RawNative): void => {
  update(w, { unpairedCalls: [...w.state.unpairedCalls, { toolName, toolUseID }] })
  if (isKnown(w.state.requests, toolUseID) || w.state.closed.has(toolUseID)) return waitFor(w, toolUseID)
  if (toolName === "AskUserQuestion") openQuestion(w, toolUseID, input, raw)
  else if (toolName === "ExitPlanMode") openPlan(w, toolUseID, input, raw, true)
  else {
    const request = register(w, toolUseID, toolName, "approval", {})
    w.drafts.push(...approvalOpened(request, input, raw), sessionState("waiting", ["waitingOnApproval"], raw))
  }
  waitFor(w, toolUseID)
}

/** The callback waits for its request's end: handed at once if it ended already or could not open. */
const waitFor = (w: Working, toolUseID: string): void => {
  update(w, { callbacks: withMember(w.state.callbacks, toolUseID) })
  if (!isKnown(w.state.requests, toolUseID)) receipt(w, toolUseID, w.state.closed.get(toolUseID))
}

const canUseToolResult = (w: Working, line: CanUseToolResultLine, raw: RawNative): void => {
  const calls = w.state.unpairedCalls
  const index =
    line.toolUseID !== undefined
      ? calls.findIndex((c) => c.toolUseID === line.toolUseID)
      : calls.findIndex((c) => c.toolName === line.toolName)
  const toolUseID = line.toolUseID ?? calls[index]?.toolUseID
  if (index >= 0) update(w, { unpairedCalls: calls.filter((_, i) => i !== index) })
  if (toolUseID === undefined)
    return warning(w, "claude.unpaired_result", `a ${line.toolName} result answers no known call`, raw)
  if (line.result.behavior === "deny") update(w, { denied: withMember(w.state.denied, toolUseID) })
  const request = w.state.requests.get(toolUseID)
  // Our decision line already resolved it (the live path); this derives it for bare recordings.
  if (request !== undefined) resolve(w, toolUseID, decisionFromResult(request, line.result), raw)
}

const register = (
  w: Working,
  toolUseID: string,
  toolName: string,
  kind: ClaudeRequest["kind"],
  extra: Partial<ClaudeRequest>
): ClaudeRequest => {
  const request: ClaudeRequest = {
    key: toolUseID,
    toolName,
    kind,
    turnId: turnOf(w),
    requestId: requestIds(w.state.threadId, toolUseID).requestId,
    blocking: false,
    answered: false,
    ...extra
  }
  update(w, { requests: withOpened(w.state.requests, request) })
  return request
}

/** An MCP elicitation (`onElicitation`): a prompt, or a visible warning and a decline when it cannot be shown. */
const openElicitation = (w: Working, key: string, input: unknown, raw: RawNative): void => {
  if (!isKnown(w.state.requests, key) && !w.state.closed.has(key)) {
    const opened = elicitationPrompt(input, requestIds(w.state.threadId, key).promptId)
    if (!opened.ok) warning(w, "claude.elicitation_refused", `an MCP elicitation cannot be shown: ${opened.error}`, raw)
    else {
      const { prompt, fields } = opened
      const extra = { prompt, promptId: prompt.promptId, blocking: true, elicitationFields: fields }
      const request = register(w, key, ELICITATION_TOOL, "prompt", extra)
      w.drafts.push(...questionOpenedDrafts(request, prompt, raw), sessionState("waiting", ["waitingOnUserInput"], raw))
    }
  }
  waitFor(w, key)
}

export const openQuestion = (w: Working, toolUseID: string, input: unknown, raw: RawNative): void => {
  const decoded = Schema.decodeUnknownOption(AskUserQuestionInput)(input)
  if (Option.isNone(decoded))
    return warning(w, "claude.malformed_question", "AskUserQuestion input is not a question list", raw)
  const prompt = promptFromAskUserQuestion(requestIds(w.state.threadId, toolUseID).promptId, decoded.value)
  const extra = { prompt, promptId: prompt.promptId, blocking: prompt.blocking === true }
  const request = register(w, toolUseID, "AskUserQuestion", "prompt", extra)
  w.drafts.push(...questionOpenedDrafts(request, prompt, raw), sessionState("waiting", ["waitingOnUserInput"], raw))
}

export const openPlan = (w: Working, toolUseID: string, input: unknown, raw: RawNative, fromCall: boolean): void => {
  const decoded = Schema.decodeUnknownOption(ExitPlanModeInput)(input)
  if (Option.isNone(decoded)) {
    // The tool use may still lack the plan; the CLI supplies it in the canUseTool input.
    if (fromCall) warning(w, "claude.malformed_plan", "ExitPlanMode carries no plan text", raw)
    return
  }
  const { planId } = requestIds(w.state.threadId, toolUseID)
  const request = register(w, toolUseID, "ExitPlanMode", "plan", { planId, planMarkdown: decoded.value.plan })
  w.drafts.push(
    ...planOpened(request, planId, decoded.value.plan, decoded.value.planFilePath, raw),
    sessionState("waiting", ["waitingOnApproval"], raw)
  )
}
