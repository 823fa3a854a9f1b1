import type {
  OptionId,
  PromptId,
  PromptQuestion,
  QuestionId,
  ResolvedAnswerEntry,
  UserInputAnswerEntry,
  UserInputPrompt
} from "@planbridge/contracts"
import { Array as Arr } from "effect"
import type { AskUserQuestionInput } from "./ClaudeNative.ts"
import { definedFields } from "../../util/definedFields.ts"

/**
 * AskUserQuestion ↔ canonical prompt. Question and option ids are positional (`q0`, `q0.o1`):
 * the tool input has no ids, and its order is fixed for the life of the tool call, so the same
 * input always yields the same ids (live and in replay).
 */
export const promptFromAskUserQuestion = (promptId: PromptId, input: AskUserQuestionInput): UserInputPrompt => {
  const questions = Arr.map(input.questions, (q, qi): PromptQuestion => ({
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
  return { promptId, questions, source: "tool-derived", blocking: true }
}

/**
 * The `system/init` capability under which an answer may say how a question went unanswered
 * (`annotations[question].unanswered`); an older CLI on a strict host refuses the whole answer
 * carrying it, so it is sent only to a session that advertises it (SDK 0.3.333).
 */
export const UNANSWERED_CAPABILITY = "ask_user_question_unanswered_v1"
/** The answer text the CLI reads as "no answer" (the model does not see `dismissed` itself). */
export const NO_PREFERENCE = "[No preference]"

/** How the questions an answer leaves out went unanswered: one skipped, or the whole card dismissed. */
export type Unanswered = "skipped" | "dismissed"

type Annotation = { readonly notes?: string; readonly unanswered?: Unanswered }

/**
 * What the CLI expects in `updatedInput`: `answers` keyed by the full question text (one label,
 * labels joined with ", " for multi-select, or the free text itself), and free text given
 * next to a selection as `annotations[question].notes` (the model sees it as "notes: …"). With
 * `unanswered` (a session advertising `UNANSWERED_CAPABILITY`), every question of `prompt` the
 * entries leave out is marked `annotations[question].unanswered`: `skipped` (the model reads it
 * as no answer), or `dismissed` with the answer `[No preference]` (which the model reads so).
 */
export const nativeAnswers = (
  entries: ReadonlyArray<ResolvedAnswerEntry>,
  unanswered?: { readonly prompt: UserInputPrompt; readonly how: Unanswered }
): { readonly answers: Record<string, string>; readonly annotations: Record<string, Annotation> } => {
  const answers: Record<string, string> = {}
  const annotations: Record<string, Annotation> = {}
  if (unanswered !== undefined) {
    const answered = new Set(entries.map((e) => e.question.id as string))
    for (const question of unanswered.prompt.questions) {
      if (answered.has(question.id)) continue
      annotations[question.label] = { unanswered: unanswered.how }
      if (unanswered.how === "dismissed") answers[question.label] = NO_PREFERENCE
    }
  }
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
  const annotationOf = (label: string): object | undefined => {
    if (typeof annotations !== "object" || annotations === null) return undefined
    const note: unknown = (annotations as Record<string, unknown>)[label]
    return typeof note === "object" && note !== null ? note : undefined
  }
  const entries: Array<UserInputAnswerEntry> = []
  for (const question of prompt.questions) {
    const value = answers[question.label]
    // Marked unanswered: whatever text stands in for it is no answer.
    const note = annotationOf(question.label)
    if (value === undefined || (note !== undefined && "unanswered" in note)) continue
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
      const notes = note !== undefined && "notes" in note && typeof note.notes === "string" ? note.notes : undefined
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
