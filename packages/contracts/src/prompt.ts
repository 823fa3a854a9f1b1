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

/**
 * Only web addresses may be offered to open (a `javascript:` or `file:` link is no login page):
 * `http(s)://`, a host, then no whitespace or control characters.
 */
const isWebUrl = Schema.isPattern(/^https?:\/\/[^\s/?#]+[^\s\u0000-\u001f]*$/iu, { expected: "an http(s) URL" })

/**
 * URL mode (MCP / ACP elicitation `mode: "url"`): the answer is given out of band, on a page at
 * `url` (a login, a secret typed on the provider's own page), never through Planbridge. Such a
 * prompt has the one question `URL_QUESTION_ID` with the one option `URL_OPEN_OPTION_ID`:
 * answering it tells the provider the person opened the page (`accept`); dismissing it declines
 * (`empty`) or cancels. It resolves `answered` when the provider says the flow completed.
 */
export const PromptUrl = Schema.Struct({
  url: Schema.String.check(isWebUrl),
  /** The provider's id of the out-of-band flow (MCP / ACP `elicitationId`), when it has one. */
  elicitationId: Schema.optionalKey(Schema.String)
})
export type PromptUrl = typeof PromptUrl.Type

/** A question card: one prompt groups the questions of one native request. */
export const UserInputPrompt = Schema.Struct({
  promptId: PromptId,
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  questions: Schema.NonEmptyArray(PromptQuestion),
  source: PromptSource,
  /** The agent waits for the answer (Codex `isBlocking`, absent meaning true; Claude and Cursor always). */
  blocking: Schema.Boolean,
  /** Set on a URL-mode prompt (see `PromptUrl`); absent on every other. */
  url: Schema.optionalKey(PromptUrl)
})
export type UserInputPrompt = typeof UserInputPrompt.Type

/** The one question of a URL-mode prompt, and its one option (open the page). */
export const URL_QUESTION_ID = QuestionId.make("open_url")
export const URL_OPEN_OPTION_ID = OptionId.make("open")

/** A URL-mode prompt: `message` is what the provider says the page is for. */
export const urlPrompt = (input: {
  readonly promptId: PromptId
  readonly message: string
  readonly url: PromptUrl
  readonly title?: string
}): UserInputPrompt => ({
  promptId: input.promptId,
  ...(input.title === undefined ? {} : { title: input.title }),
  questions: [
    {
      id: URL_QUESTION_ID,
      label: input.message,
      options: [{ id: URL_OPEN_OPTION_ID, label: "Open" }],
      multiSelect: false,
      allowFreeform: false,
      secret: false,
      required: true
    }
  ],
  source: "native",
  blocking: true,
  url: input.url
})

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
