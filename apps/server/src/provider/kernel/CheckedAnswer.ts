import {
  validateAnswer,
  type AnswerValidationError,
  type ResolvedAnswerEntry,
  type UserInputAnswer,
  type UserInputPrompt
} from "@planbridge/contracts"
import { definedFields } from "../../util/definedFields.ts"
import type { FieldAnswer } from "./ElicitationForm.ts"

declare const checkedAnswer: unique symbol

/**
 * An answer validated against the prompt it answers (the one the server stored when the prompt
 * was requested). Adapters take only this: they never validate an answer again, so every
 * provider refuses the same bad answers the same way, before anything reaches a provider.
 */
export interface CheckedAnswer {
  readonly answer: UserInputAnswer
  /** Each entry with its question and the options it selected, in the answer's order. */
  readonly entries: ReadonlyArray<ResolvedAnswerEntry>
  readonly [checkedAnswer]: true
}

/** The one place an answer is validated (`validateAnswer`, contracts). */
export const checkAnswer = (
  prompt: UserInputPrompt,
  answer: UserInputAnswer
):
  | { readonly ok: true; readonly checked: CheckedAnswer }
  | { readonly ok: false; readonly error: AnswerValidationError } => {
  const result = validateAnswer(prompt, answer)
  if (!result.ok) return result
  // The brand exists only in the type: this function is what makes a CheckedAnswer.
  return { ok: true, checked: { answer, entries: result.entries } as unknown as CheckedAnswer }
}

/** The answer as plain entries (question id, selected option ids, text): what a native reply encodes. */
export const fieldAnswers = (checked: CheckedAnswer): ReadonlyArray<FieldAnswer> =>
  checked.entries.map((e) => ({
    questionId: e.question.id,
    selectedOptionIds: e.selected.map((o) => o.id),
    ...definedFields({ text: e.text })
  }))
