import { Schema } from "effect"

/** Providers known today. The schema stays open so a new adapter needs no contract change. */
export const KnownProviderKinds = ["codex", "claude", "cursor"] as const

/**
 * `codex | claude | cursor`, open to more: any lowercase slug (a generic ACP agent runs as
 * e.g. `acp-codex`). Validated by shape, never guessed from substrings.
 */
export const ProviderKind = Schema.String.check(
  Schema.isPattern(/^[a-z][a-z0-9-]{0,63}$/u, { expected: "a lowercase provider slug such as codex, claude or cursor" })
)
export type ProviderKind = typeof ProviderKind.Type

/** The agent's operating mode; independent of any plan content on screen. */
export const OperatingMode = Schema.Literals(["default", "plan", "ask", "execute", "unknown"])
export type OperatingMode = typeof OperatingMode.Type

/**
 * What a session can do. Clients render from these flags, never from the provider name.
 * Published in `session.configured` and again in `capabilities.changed` when they change
 * (e.g. an ACP agent that sends its first `plan` update).
 */
export const ProviderCapabilities = Schema.Struct({
  supportsPlanMode: Schema.Boolean,
  supportsAskMode: Schema.Boolean,
  /** Checklist snapshots (`turn.plan.updated`). */
  supportsStructuredPlanUpdates: Schema.Boolean,
  /** Proposed-plan prose streamed as it is written (`content.delta` plan_text). */
  supportsPlanTextStreaming: Schema.Boolean,
  /** Question cards (`user-input.requested`). */
  supportsStructuredUserInput: Schema.Boolean,
  supportsFreeformUserInput: Schema.Boolean,
  supportsMultiSelect: Schema.Boolean,
  /** A proposed plan that the user approves or rejects (`plan.decision`). */
  supportsExitPlanMode: Schema.Boolean,
  /**
   * With `supportsExitPlanMode`: a plan may be approved with edits (`plan.decide` `edited`).
   * Absent (and in sessions recorded before the flag): it may not, and the decision is refused.
   */
  supportsPlanEdits: Schema.optionalKey(Schema.Boolean),
  /**
   * With `supportsExitPlanMode`: a rejection may carry `feedback` to the model. Absent: it may
   * not (an ACP agent whose plan arrives as a permission request has nowhere to put it).
   */
  supportsPlanFeedback: Schema.optionalKey(Schema.Boolean),
  /**
   * With `supportsExitPlanMode`: the agent reviews a plan with choices of its own (ACP
   * `implement_plan` / `revise_plan`, `exit-plan-auto`, `exit-plan-clear-*`, …), listed as the
   * `options` of the plan's `plan_approval` request (same `planId`); `plan.decide` picks one with
   * `optionId`. Absent: approve and reject are the only choices.
   */
  supportsPlanOptions: Schema.optionalKey(Schema.Boolean),
  supportsModeSwitching: Schema.Boolean,
  /**
   * `thread.resume` can attach a new provider session to this thread after its session ended
   * (Codex `thread/resume`, Claude `resume`, ACP `session/load` when the agent announces `loadSession`).
   */
  supportsResume: Schema.Boolean
})
export type ProviderCapabilities = typeof ProviderCapabilities.Type

/** Token usage as reported at the end of a turn. Providers report different subsets. */
export const TokenUsage = Schema.Struct({
  inputTokens: Schema.optionalKey(Schema.Finite),
  outputTokens: Schema.optionalKey(Schema.Finite),
  cachedInputTokens: Schema.optionalKey(Schema.Finite),
  reasoningOutputTokens: Schema.optionalKey(Schema.Finite),
  totalTokens: Schema.optionalKey(Schema.Finite)
})
export type TokenUsage = typeof TokenUsage.Type
