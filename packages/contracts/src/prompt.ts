import { Schema } from "effect"
import { OptionId, PromptId, QuestionId } from "./ids.ts"

export const PromptOption = Schema.Struct({
  id: OptionId,
  label: Schema.String,
  description: Schema.optionalKey(Schema.String),
  recommended: Schema.optionalKey(Schema.Boolean)
})
export type PromptOption = typeof PromptOption.Type

export const PromptQuestion = Schema.Struct({
  id: QuestionId,
  header: Schema.optionalKey(Schema.String),
  label: Schema.String,
  description: Schema.optionalKey(Schema.String),
  /** May be empty only for a free-form question (an elicitation text field). */
  options: Schema.Array(PromptOption),
  multiSelect: Schema.Boolean,
  allowFreeform: Schema.Boolean,
  freeformPlaceholder: Schema.optionalKey(Schema.String),
  /**
   * The answer must not be shown, logged or persisted in clear (Codex `isSecret`). This is
   * display-only on the provider side; Planbridge treats it as sensitive data.
   */
  secret: Schema.Boolean,
  required: Schema.Boolean
}).check(
  Schema.makeFilter((q) => q.options.length > 0 || q.allowFreeform, {
    expected: "a question with at least one option or a free-form answer"
  })
)
export type PromptQuestion = typeof PromptQuestion.Type

export const PromptSource = Schema.Literals(["native", "tool-derived", "synthesized"])
export type PromptSource = typeof PromptSource.Type

/** A question card: one prompt groups the questions of one native request. */
export const UserInputPrompt = Schema.Struct({
  promptId: PromptId,
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  questions: Schema.NonEmptyArray(PromptQuestion),
  source: PromptSource,
  /** The agent waits for the answer (Codex `isBlocking`, absent meaning true; Claude and Cursor always). */
  blocking: Schema.Boolean
})
export type UserInputPrompt = typeof UserInputPrompt.Type

/**
 * One question's answer. `redacted` is set instead of the values when the question was secret:
 * this is how the answer is stored and shown; only the provider ever receives the clear value.
 */
export const UserInputAnswerEntry = Schema.Struct({
  questionId: QuestionId,
  selectedOptionIds: Schema.optionalKey(Schema.Array(OptionId)),
  text: Schema.optionalKey(Schema.String),
  redacted: Schema.optionalKey(Schema.Literal(true))
})
export type UserInputAnswerEntry = typeof UserInputAnswerEntry.Type

export const UserInputAnswer = Schema.Struct({
  promptId: PromptId,
  answers: Schema.Array(UserInputAnswerEntry)
})
export type UserInputAnswer = typeof UserInputAnswer.Type

/**
 * Why a prompt stopped being pending. Users asked peers for exactly this distinction:
 * - answered: the user answered (possibly only some questions);
 * - empty: resolved without an answer (skipped, non-blocking auto-resolution) — never "chose the default";
 * - cancelled: the turn was interrupted or the user/operator cancelled;
 * - expired: a deadline passed;
 * - superseded: a newer request replaced it (providers that overwrite; Codex 0.169 serializes instead);
 * - provider_exited: the provider process ended while it waited;
 * - server_restarted: Planbridge restarted while it waited (the native waiter died with the old process);
 * - server_stopped: Planbridge was stopped gracefully (SIGINT, SIGTERM) while it waited, closing the session;
 * - refused: the provider refused the question before the user saw it (wrong mode, not root thread).
 */
export const PromptResolutionKind = Schema.Literals([
  "answered",
  "empty",
  "cancelled",
  "expired",
  "superseded",
  "provider_exited",
  "server_restarted",
  "server_stopped",
  "refused"
])
export type PromptResolutionKind = typeof PromptResolutionKind.Type
