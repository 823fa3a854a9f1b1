import { Schema } from "effect"
import type { UserInputAnswer, UserInputAnswerEntry, UserInputPrompt, PromptQuestion, PromptOption } from "./prompt.ts"

/** Why a canonical answer does not fit the prompt it answers; `path` points into the answer. */
export class AnswerValidationError extends Schema.TaggedError<AnswerValidationError>()("AnswerValidationError", {
  message: Schema.String,
  path: Schema.Array(Schema.Union([Schema.String, Schema.Finite]))
}) {}

/** A validated answer, each entry paired with its question and the options it selected. */
export interface ResolvedAnswerEntry {
  readonly question: PromptQuestion
  readonly selected: ReadonlyArray<PromptOption>
  readonly text: string | undefined
}

const fail = (message: string, path: ReadonlyArray<string | number>) =>
  new AnswerValidationError({ message, path: [...path] })

/**
 * Checks an answer against the prompt: known question ids, each at most once; option ids that
 * exist on that question; a single selection unless multi-select; free text only where the
 * question allows it; every required question answered. Provider-agnostic, so every adapter
 * refuses the same bad answers the same way before anything reaches a provider.
 */
export const validateAnswer = (
  prompt: UserInputPrompt,
  answer: UserInputAnswer
):
  | { readonly ok: true; readonly entries: ReadonlyArray<ResolvedAnswerEntry> }
  | { readonly ok: false; readonly error: AnswerValidationError } => {
  if (answer.promptId !== prompt.promptId) {
    return { ok: false, error: fail(`answer is for prompt ${answer.promptId}, not ${prompt.promptId}`, ["promptId"]) }
  }
  const byId = new Map(prompt.questions.map((q) => [q.id as string, q]))
  const seen = new Set<string>()
  const entries: Array<ResolvedAnswerEntry> = []
  for (const [index, entry] of answer.answers.entries()) {
    const path = ["answers", index]
    const question = byId.get(entry.questionId)
    if (question === undefined) {
      return { ok: false, error: fail(`unknown question id '${entry.questionId}'`, [...path, "questionId"]) }
    }
    if (seen.has(entry.questionId)) {
      return { ok: false, error: fail(`question '${entry.questionId}' answered twice`, [...path, "questionId"]) }
    }
    seen.add(entry.questionId)
    if (entry.redacted === true) {
      return { ok: false, error: fail("a redacted entry cannot be sent as an answer", [...path, "redacted"]) }
    }
    const optionIds = entry.selectedOptionIds ?? []
    if (optionIds.length > 1 && !question.multiSelect) {
      return {
        ok: false,
        error: fail(`question '${question.id}' takes a single option`, [...path, "selectedOptionIds"])
      }
    }
    const selected: Array<PromptOption> = []
    for (const [i, optionId] of optionIds.entries()) {
      const option = question.options.find((o) => o.id === optionId)
      if (option === undefined) {
        return {
          ok: false,
          error: fail(`question '${question.id}' has no option '${optionId}'`, [...path, "selectedOptionIds", i])
        }
      }
      if (selected.includes(option)) {
        return { ok: false, error: fail(`option '${optionId}' selected twice`, [...path, "selectedOptionIds", i]) }
      }
      selected.push(option)
    }
    const text = entry.text !== undefined && entry.text.length > 0 ? entry.text : undefined
    if (text !== undefined && !question.allowFreeform) {
      return { ok: false, error: fail(`question '${question.id}' does not accept free text`, [...path, "text"]) }
    }
    if (selected.length === 0 && text === undefined) {
      return { ok: false, error: fail(`question '${question.id}' has neither a selection nor text`, path) }
    }
    entries.push({ question, selected, text })
  }
  const missing = prompt.questions.find((q) => q.required && !seen.has(q.id))
  if (missing !== undefined) {
    return { ok: false, error: fail(`required question '${missing.id}' is not answered`, ["answers"]) }
  }
  return { ok: true, entries }
}

/**
 * What may be stored, logged and shown: entries of secret questions keep only their question
 * id and a redaction marker. The clear answer goes to the provider and nowhere else.
 */
export const redactAnswerEntries = (
  prompt: UserInputPrompt,
  entries: ReadonlyArray<UserInputAnswerEntry>
): ReadonlyArray<UserInputAnswerEntry> => {
  const secret = new Set(prompt.questions.filter((q) => q.secret).map((q) => q.id as string))
  return entries.map((entry) =>
    secret.has(entry.questionId) ? { questionId: entry.questionId, redacted: true } : entry
  )
}
