import type {
  OptionId,
  PromptId,
  PromptQuestion,
  QuestionId,
  ResolvedAnswerEntry,
  UserInputAnswerEntry,
  UserInputPrompt
} from "@planbridge/contracts"
import type { AskUserQuestionInput } from "./ClaudeNative.ts"
import { definedFields } from "../../util/definedFields.ts"

/**
 * AskUserQuestion ↔ canonical prompt. Question and option ids are positional (`q0`, `q0.o1`):
 * the tool input has no ids, and its order is fixed for the life of the tool call, so the same
 * input always yields the same ids (live and in replay).
 */
export const promptFromAskUserQuestion = (promptId: PromptId, input: AskUserQuestionInput): UserInputPrompt => {
  const [first, ...rest] = input.questions.map((q, qi): PromptQuestion => ({
    id: `q${qi}` as QuestionId,
    ...definedFields({ header: q.header }),
    label: q.question,
    options: q.options.map((o, oi) => ({
      id: `q${qi}.o${oi}` as OptionId,
      label: o.label,
      ...definedFields({ description: o.description })
    })),
    multiSelect: q.multiSelect ?? false,
    // The CLI always lets the user type an "Other" answer.
    allowFreeform: true,
    secret: false,
    // A question left out of the answers is simply absent on the wire.
    required: false
  }))
  // `questions` is a non-empty array in the schema, so `first` exists.
  return { promptId, questions: [first as PromptQuestion, ...rest], source: "tool-derived", blocking: true }
}

/**
 * What the CLI expects in `updatedInput`: `answers` keyed by the full question text (one label,
 * labels joined with ", " for multi-select, or the free text itself), and free text given
 * next to a selection as `annotations[question].notes` (the model sees it as "notes: …").
 */
export const nativeAnswers = (
  entries: ReadonlyArray<ResolvedAnswerEntry>
): { readonly answers: Record<string, string>; readonly annotations: Record<string, { readonly notes: string }> } => {
  const answers: Record<string, string> = {}
  const annotations: Record<string, { readonly notes: string }> = {}
  for (const entry of entries) {
    if (entry.selected.length === 0) {
      answers[entry.question.label] = entry.text ?? ""
      continue
    }
    answers[entry.question.label] = entry.selected.map((o) => o.label).join(", ")
    if (entry.text !== undefined) annotations[entry.question.label] = { notes: entry.text }
  }
  return { answers, annotations }
}

/**
 * The reverse, for transcripts that hold only the native result (no decision line): a value
 * that names options (one label, ", "-joined labels or an array of labels) selects them, with
 * its annotation notes as text; anything else is free text.
 */
export const entriesFromNativeAnswers = (
  prompt: UserInputPrompt,
  answers: Readonly<Record<string, unknown>>,
  annotations: unknown = undefined
): ReadonlyArray<UserInputAnswerEntry> => {
  const notesOf = (label: string): string | undefined => {
    if (typeof annotations !== "object" || annotations === null) return undefined
    const note: unknown = (annotations as Record<string, unknown>)[label]
    return typeof note === "object" && note !== null && "notes" in note && typeof note.notes === "string"
      ? note.notes
      : undefined
  }
  const entries: Array<UserInputAnswerEntry> = []
  for (const question of prompt.questions) {
    const value = answers[question.label]
    if (value === undefined) continue
    const byLabel = (label: string) => question.options.find((o) => o.label === label)
    const parts = Array.isArray(value)
      ? value.map(String)
      : typeof value === "string"
        ? byLabel(value) !== undefined
          ? [value]
          : value.split(", ")
        : [JSON.stringify(value)]
    const options = parts.map(byLabel)
    if (options.every((o) => o !== undefined) && options.length > 0) {
      const notes = notesOf(question.label)
      entries.push({
        questionId: question.id,
        selectedOptionIds: options.map((o) => o.id),
        ...definedFields({ text: notes })
      })
    } else {
      entries.push({ questionId: question.id, text: Array.isArray(value) ? parts.join(", ") : String(value) })
    }
  }
  return entries
}
