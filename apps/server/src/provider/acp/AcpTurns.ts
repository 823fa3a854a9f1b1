import { ItemId, TurnId, type RawNative } from "@planbridge/contracts"
import { Result, Schema } from "effect"
import { rawOf, warningDraft, type EventDraft } from "../kernel/EventDraft.ts"
import { noOpenRequests } from "../kernel/OpenRequests.ts"
import { definedFields } from "../../util/definedFields.ts"
import { configValues, modeCapabilities, modeChanged, readModes } from "./AcpModes.ts"
import * as N from "./AcpNative.ts"
import { cancelledWithTurn } from "./AcpRequestResolve.ts"
import { profileForAgent } from "./AcpProfile.ts"
import { resumable, type AcpState, type ExitInfo, type Mapped } from "./AcpState.ts"
import { closeText, itemsOfNewTurn } from "./AcpTurnItems.ts"
import { mapped, sessionStateDraft, warned } from "../kernel/Mapped.ts"
import { turnFailed, turnStartedDrafts } from "../kernel/TurnDrafts.ts"
import { requestEnd } from "../kernel/RequestDrafts.ts"

/** The session's set-up, its modes and its turns, pure: what our requests' responses change. */

const decodeInitialize = Schema.decodeUnknownResult(N.InitializeResponse)
const decodeSetup = Schema.decodeUnknownResult(N.SessionSetup)
const decodeOptions = Schema.decodeUnknownResult(N.ConfigOptionUpdate)
const decodeSwitch = Schema.decodeUnknownResult(N.ModeSwitch)
const decodePrompt = Schema.decodeUnknownResult(N.PromptRequest)
const decodePromptResponse = Schema.decodeUnknownResult(N.PromptResponse)

/** session/new, session/load or session/resume answered: the session is configured (updates before it were history). */
const configure = (s: AcpState, setup: unknown, info: { readonly cwd: string; readonly method: string }): Mapped => {
  const resumed = info.method !== "session/new"
  const init = Result.getOrUndefined(decodeInitialize(s.initialize))
  const decoded = decodeSetup(setup)
  const raw = rawOf("acp.response", info.method, setup)
  if (Result.isFailure(decoded))
    return warned(s, "session_setup_invalid", `${info.method} response did not decode`, raw, setup)
  const session = decoded.success
  const nativeSessionId = session.sessionId ?? s.nativeSessionId
  const modes = readModes(s.profile, session.modes ?? undefined, session.configOptions ?? undefined)
  const offered = modeCapabilities(s.profile, modes)
  // A later session can take this one up only if the agent announced `session/load` or `session/resume`.
  const capabilities = { ...offered, supportsResume: offered.supportsResume && resumable(init) }
  const configOption = session.configOptions?.find((o) => o.category === "model")?.currentValue
  const version = init?.agentInfo?.version
  const history = `${s.historySkipped} history updates replayed by session/load were not mapped`
  return mapped(
    { ...s, nativeSessionId, modes, capabilities, configured: true },
    {
      type: "session.started",
      raw: rawOf("acp.response", "initialize", s.initialize),
      payload: {
        cwd: info.cwd,
        resumed,
        ...definedFields({ nativeSessionId, providerVersion: version })
      }
    },
    {
      type: "session.configured",
      raw,
      payload: {
        capabilities,
        mode: modes.mode,
        ...definedFields({ nativeMode: modes.nativeMode }),
        model: typeof configOption === "string" ? configOption : null
      }
    },
    ...(s.historySkipped > 0 ? [warningDraft("history_not_mapped", history, raw)] : []),
    sessionStateDraft("idle", [], raw)
  )
}

/**
 * The agent accepted a switch (`session/set_mode`, or `session/set_config_option` of the mode or
 * the plan option); some agents echo an update, some do not. A reply listing the config options
 * is read whole.
 */
const modeSet = (s: AcpState, method: string, params: unknown, response: unknown): Mapped => {
  const options = decodeOptions(response)
  const raw = rawOf("acp.response", method, response)
  if (Result.isSuccess(options)) return modeChanged(s, configValues(s.profile, options.success.configOptions), raw)
  const set = Result.getOrUndefined(decodeSwitch(params))
  const value = set?.modeId ?? set?.value ?? undefined
  if (value === undefined) return mapped(s)
  const isPlanOption = method === "session/set_config_option" && set?.configId === s.profile.planOption?.configId
  return modeChanged(s, isPlanOption ? { planValue: value } : { preset: value }, raw)
}

/** The text blocks of a `session/prompt`'s `prompt`, joined; other blocks are not text the user typed. */
const promptText = (prompt: unknown): string | undefined => {
  const blocks = Result.getOrUndefined(decodePrompt(prompt))?.prompt ?? []
  const texts = blocks.flatMap((b) => (b.type === "text" && b.text !== undefined ? [b.text] : []))
  return texts.length === 0 ? undefined : texts.join("\n\n")
}

/**
 * Our `session/prompt` starts a turn, and records what the user said as the turn's
 * `user_message` (as Codex and Claude do): the agent's `user_message_chunk` echo, when it sends
 * one, is not the record.
 */
export const startTurn = (s: AcpState, prompt: unknown): Mapped => {
  const turnSeq = s.turnSeq + 1
  const turnId = TurnId.make(`${s.idPrefix}:turn:${turnSeq}`)
  const raw = rawOf("acp.request", "session/prompt", prompt)
  const user = { itemId: ItemId.make(`${turnId}:user`), text: promptText(prompt) }
  return {
    state: { ...s, turnSeq, turnId, lastTurnId: turnId, items: itemsOfNewTurn(s.items) },
    drafts: turnStartedDrafts(turnId, s.modes.mode, raw, user)
  }
}

/** A `session/prompt` response as the payload of `turn.completed`. */
const turnCompletion = (response: N.PromptResponse): Extract<EventDraft, { type: "turn.completed" }>["payload"] => {
  const u = response.usage ?? undefined
  const usage =
    u === undefined
      ? undefined
      : definedFields({
          inputTokens: u.inputTokens,
          outputTokens: u.outputTokens,
          totalTokens: u.totalTokens,
          cachedInputTokens: u.cachedReadTokens ?? undefined,
          reasoningOutputTokens: u.thoughtTokens ?? undefined
        })
  const withUsage = usage === undefined ? {} : { usage }
  switch (response.stopReason) {
    case "cancelled":
      return { status: "interrupted", ...withUsage }
    case "refusal":
      return { status: "failed", error: { message: "the agent refused", code: "refusal" }, ...withUsage }
    default:
      return { status: "completed", ...withUsage }
  }
}

/** The agent answered our `session/prompt`: the turn ends, and what it still asked is cancelled. */
const promptFinished = (s: AcpState, reply: N.Reply): Mapped => {
  const turnId = s.turnId
  // An error as the turn reports it (its `data` left out).
  const error = "error" in reply ? { message: reply.error.message, code: reply.error.code } : undefined
  const raw = rawOf("acp.response", "session/prompt", "result" in reply ? reply.result : { error })
  if (turnId === undefined) return warned(s, "prompt_without_turn", "session/prompt finished with no turn open", raw)
  const closed = closeText(s.items, turnId)
  // The agent stopped waiting: whatever it still asked is cancelled, on both sides.
  const cancelled = cancelledWithTurn(s, turnId, raw)
  const response = "result" in reply ? Result.getOrUndefined(decodePromptResponse(reply.result)) : undefined
  const payload =
    error !== undefined
      ? { status: "failed" as const, error: { message: error.message, code: String(error.code) } }
      : response === undefined
        ? { status: "failed" as const, error: { message: "session/prompt response did not decode" } }
        : turnCompletion(response)
  const completed = { type: "turn.completed", turnId, raw, payload } as const
  const drafts = [...closed.drafts, ...cancelled.drafts, completed, sessionStateDraft("idle", [], raw)]
  const state = { ...s, turnId: undefined, items: closed.items, pending: cancelled.state.pending }
  return { state, drafts, replies: cancelled.replies ?? [] }
}

/** Our set-up request's params, as far as its response is read. */
const SetupParams = Schema.Struct({
  sessionId: Schema.optionalKey(Schema.String),
  cwd: Schema.optionalKey(Schema.String)
})

/** The agent's response to a request of ours, at its place in the stream. */
export const responded = (s: AcpState, request: { method: string; params: unknown }, reply: N.Reply): Mapped => {
  if (request.method === "session/prompt") return promptFinished(s, reply)
  if (!("result" in reply)) return mapped(s)
  switch (request.method) {
    case "initialize": {
      // The profile refined for the agent that answered (its `agentInfo.name`), never guessed.
      const agent = Result.getOrUndefined(decodeInitialize(reply.result))?.agentInfo?.name
      return mapped({ ...s, initialize: reply.result, profile: profileForAgent(s.profile, agent) })
    }
    case "session/new":
    case "session/load":
    case "session/resume": {
      const params = Result.getOrUndefined(Schema.decodeUnknownResult(SetupParams)(request.params))
      const setup =
        request.method !== "session/new" && typeof reply.result === "object" && reply.result !== null
          ? { ...reply.result, sessionId: params?.sessionId }
          : reply.result
      return configure(s, setup, { cwd: params?.cwd ?? "", method: request.method })
    }
    case "session/set_mode":
    case "session/set_config_option":
      return modeSet(s, request.method, request.params, reply.result)
  }
  return mapped(s)
}

/** The agent's exit: open requests resolve `provider_exited`, an open turn fails, the session stops. */
export const exited = (s: AcpState, info: ExitInfo, raw: RawNative): Mapped => {
  // A session that never started (its set-up failed: a refused `session/load`, a failed
  // handshake) published nothing; its start's error says what happened, and an exit on the
  // thread would tell of a session that never was (one per failed resume).
  if (!s.configured) return mapped(s)
  const closed = closeText(s.items, s.turnId)
  const drafts: Array<EventDraft> = [...closed.drafts]
  for (const p of s.pending.values())
    drafts.push(...requestEnd(definedFields({ turnId: p.turnId }), raw, p, "provider_exited"))
  if (s.turnId !== undefined) {
    drafts.push(turnFailed(s.turnId, s.fatal ?? `the agent exited (${info.exitKind})`, raw))
  }
  // Our kill is no crash of the agent's own, but the session did fail: `crashed`, with the cause.
  const fatal = s.fatal
  const payload: ExitInfo =
    fatal === undefined
      ? info
      : { ...info, exitKind: "crashed", message: info.message === undefined ? fatal : `${fatal}\n${info.message}` }
  drafts.push({ type: "session.exited", raw, payload }, sessionStateDraft("stopped", [], raw))
  return { state: { ...s, items: closed.items, pending: noOpenRequests(), turnId: undefined }, drafts }
}
