import type { ItemId, RawNative, TurnId } from "@planbridge/contracts"
import { Option, Result, Schema } from "effect"
import { lineTooLongMessage, MAX_LINE_BYTES } from "../lines.ts"
import { configLayers } from "./ClaudeConfigLayers.ts"
import { receipt, resolve, turnOf, type ClaudeMappingState, type Mapped } from "./ClaudeMappingState.ts"
import { canonicalMode, CLAUDE_CAPABILITIES } from "./ClaudeModes.ts"
import { AskUserQuestionInput, ExitPlanModeInput } from "./ClaudeNative.ts"
import { promptFromAskUserQuestion } from "./ClaudePrompts.ts"
import {
  toolApprovalOpened,
  decisionFromResult,
  planOpened,
  questionOpenedDrafts,
  requestIds,
  type ClaudeRequest
} from "./ClaudeRequests.ts"
import type { CanUseToolResultLine, ClaudeLocal } from "./ClaudeTranscript.ts"
import { definedFields } from "../../util/definedFields.ts"
import { decided, ELICITATION_TOOL, elicitationPrompt } from "./ClaudeElicitation.ts"
import { withMember } from "../kernel/immutable.ts"
import { isKnown, withOpened } from "../kernel/OpenRequests.ts"
import { rawOf, type EventDraft } from "../kernel/EventDraft.ts"
import { andThen, chain, each, mapped, sessionStateDraft, warned } from "../kernel/Mapped.ts"
import { turnFailed, turnStartedDrafts } from "../kernel/TurnDrafts.ts"

/**
 * Our side of the Claude SDK, pure: the local lines (what we sent, decided and saw happen to the
 * CLI) and the native requests they open and close. A `canUseTool` call is a line; its callback
 * waits for the receipt this mapping replies once the request is closed (by our decision line,
 * the turn's end, an interrupt or the exit) — at once if it is closed already or cannot open.
 */

/** The raw payload of a local line: its kind as `_local` and its time, then its fields. */
const localRaw = (t: number, { kind, ...fields }: ClaudeLocal): RawNative =>
  rawOf("claude.sdk.local", kind, { _local: kind, t, ...fields })

export const mapLocal = (s: ClaudeMappingState, t: number, line: ClaudeLocal): Mapped => {
  const raw = localRaw(t, line)
  switch (line.kind) {
    case "start":
      return mapped(
        { ...s, mode: line.permissionMode, settingSources: line.settingSources },
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
    case "user": {
      const turnId = line.turnId as TurnId
      const user = { itemId: `${turnId}/user` as ItemId, text: line.text }
      return mapped(
        { ...s, turn: { turnId, interrupted: false } },
        ...turnStartedDrafts(turnId, canonicalMode(s.mode), raw, user)
      )
    }
    case "interrupt":
      return mapped(s.turn === undefined ? s : { ...s, turn: { ...s.turn, interrupted: true } })
    case "setPermissionMode":
    // The CLI answers with a system/status carrying the mode now in effect; that is the change.
    case "elicitation-result":
      return mapped(s)
    case "canUseTool":
      return canUseTool(s, line.toolName, line.input, line.options.toolUseID, raw)
    case "canUseTool-result":
      return canUseToolResult(s, line, raw)
    case "elicitation":
      return openElicitation(s, line.key, line.request, raw)
    case "decision":
      return decided(s, line.toolUseID, line.decision, raw)
    case "lineTooLong": {
      const message = lineTooLongMessage("Claude Code", line.bytes)
      const detail = { bytes: line.bytes, limit: MAX_LINE_BYTES }
      return mapped(s, {
        type: "runtime.error",
        raw,
        payload: { code: "claude.line_too_long", message, fatal: true, detail }
      })
    }
    case "exit": {
      const { exitKind, exitCode, signal } = line
      const payload = { exitKind, exitCode, signal, ...definedFields({ message: line.message }) }
      const exited: EventDraft = { type: "session.exited", raw, payload }
      // Every open request ends `provider_exited`, then the turn fails, then the session exits.
      const resolved = each(s, s.requests.keys(), (next, key) => resolve(next, key, { kind: "exited" }, raw))
      return andThen(resolved, (next) => {
        if (next.turn === undefined) return mapped(next, exited)
        const message = line.message ?? "the Claude Code process exited"
        return mapped({ ...next, turn: undefined }, turnFailed(next.turn.turnId, message, raw), exited)
      })
    }
  }
}

const canUseTool = (s0: ClaudeMappingState, toolName: string, input: unknown, toolUseID: string, raw: RawNative) =>
  called({ ...s0, unpairedCalls: [...s0.unpairedCalls, { toolName, toolUseID }] }, toolUseID, (s) => {
    if (toolName === "AskUserQuestion") return openQuestion(s, toolUseID, input, raw)
    if (toolName === "ExitPlanMode") return openPlan(s, toolUseID, input, raw, true)
    return opening(s, toolUseID, toolName, "approval", {}, raw, (request) => [toolApprovalOpened(request, input, raw)])
  })

/**
 * A callback's call (`canUseTool`, `onElicitation`): its request opened by `open` unless known or
 * closed already; then the callback waits for the request's end, handed at once if it ended
 * already or could not open.
 */
const called = (s: ClaudeMappingState, key: string, open: (s: ClaudeMappingState) => Mapped): Mapped =>
  chain(
    s,
    (next) => (isKnown(next.requests, key) || next.closed.has(key) ? mapped(next) : open(next)),
    (next) => mapped({ ...next, callbacks: withMember(next.callbacks, key) }),
    (next) => (isKnown(next.requests, key) ? mapped(next) : receipt(next, key, next.closed.get(key)))
  )

const canUseToolResult = (s: ClaudeMappingState, line: CanUseToolResultLine, raw: RawNative): Mapped => {
  const calls = s.unpairedCalls
  const index =
    line.toolUseID !== undefined
      ? calls.findIndex((c) => c.toolUseID === line.toolUseID)
      : calls.findIndex((c) => c.toolName === line.toolName)
  const toolUseID = line.toolUseID ?? calls[index]?.toolUseID
  const paired = index >= 0 ? { ...s, unpairedCalls: calls.filter((_, i) => i !== index) } : s
  if (toolUseID === undefined)
    return warned(paired, "claude.unpaired_result", `a ${line.toolName} result answers no known call`, raw)
  const state = line.result.behavior === "deny" ? { ...paired, denied: withMember(paired.denied, toolUseID) } : paired
  const request = state.requests.get(toolUseID)
  // Our decision line already resolved it (the live path); this derives it for bare recordings.
  return request === undefined
    ? mapped(state)
    : resolve(state, toolUseID, decisionFromResult(request, line.result), raw)
}

/** A request opened under its tool-use id: remembered, its events, and the session waiting on it. */
const opening = (
  s0: ClaudeMappingState,
  toolUseID: string,
  toolName: string,
  kind: ClaudeRequest["kind"],
  extra: Partial<ClaudeRequest>,
  raw: RawNative,
  opened: (request: ClaudeRequest) => ReadonlyArray<EventDraft>
): Mapped => {
  const { state: s, turnId } = turnOf(s0)
  const request: ClaudeRequest = {
    key: toolUseID,
    toolName,
    kind,
    turnId,
    requestId: requestIds(s.threadId, toolUseID).requestId,
    blocking: false,
    answered: false,
    ...extra
  }
  const waitingOn = kind === "prompt" ? "waitingOnUserInput" : "waitingOnApproval"
  return mapped(
    { ...s, requests: withOpened(s.requests, request) },
    ...opened(request),
    sessionStateDraft("waiting", [waitingOn], raw)
  )
}

/** An MCP elicitation (`onElicitation`): a prompt, or a visible warning and a decline when it cannot be shown. */
const openElicitation = (s0: ClaudeMappingState, key: string, input: unknown, raw: RawNative): Mapped =>
  called(s0, key, (s) => {
    const opened = elicitationPrompt(input, requestIds(s.threadId, key).promptId)
    if (Result.isFailure(opened))
      return warned(s, "claude.elicitation_refused", `an MCP elicitation cannot be shown: ${opened.failure}`, raw)
    const { prompt, fields } = opened.success
    const extra = { prompt, promptId: prompt.promptId, blocking: true, elicitationFields: fields }
    return opening(s, key, ELICITATION_TOOL, "prompt", extra, raw, (r) => questionOpenedDrafts(r, prompt, raw))
  })

export const openQuestion = (s: ClaudeMappingState, toolUseID: string, input: unknown, raw: RawNative): Mapped => {
  const decoded = Schema.decodeUnknownOption(AskUserQuestionInput)(input)
  if (Option.isNone(decoded))
    return warned(s, "claude.malformed_question", "AskUserQuestion input is not a question list", raw)
  const prompt = promptFromAskUserQuestion(requestIds(s.threadId, toolUseID).promptId, decoded.value)
  const extra = { prompt, promptId: prompt.promptId, blocking: prompt.blocking === true }
  return opening(s, toolUseID, "AskUserQuestion", "prompt", extra, raw, (r) => questionOpenedDrafts(r, prompt, raw))
}

export const openPlan = (
  s: ClaudeMappingState,
  toolUseID: string,
  input: unknown,
  raw: RawNative,
  fromCall: boolean
): Mapped => {
  const decoded = Schema.decodeUnknownOption(ExitPlanModeInput)(input)
  if (Option.isNone(decoded))
    // The tool use may still lack the plan; the CLI supplies it in the canUseTool input.
    return fromCall ? warned(s, "claude.malformed_plan", "ExitPlanMode carries no plan text", raw) : mapped(s)
  const { planId } = requestIds(s.threadId, toolUseID)
  const { plan, planFilePath } = decoded.value
  return opening(s, toolUseID, "ExitPlanMode", "plan", { planId, planMarkdown: plan }, raw, (request) =>
    planOpened(request, planId, plan, planFilePath, raw)
  )
}
