import type {
  OptionId,
  PromptId,
  QuestionId,
  ResolvedAnswerEntry,
  UserInputAnswerEntry,
  UserInputPrompt
} from "@planbridge/contracts"
import type { RequestUserInputParams, RequestUserInputResponse } from "./CodexProtocol.ts"

/**
 * Conversions between a Codex `request_user_input` request and a canonical question card, and
 * between canonical answers and the native answer map. Pure; shared by the live adapter and by
 * replay, so a replayed transcript resolves its prompts exactly as the live session did.
 */

/**
 * What Codex's own clients send, pinned to 0.171.0 (whose binary carries these very strings):
 * the TUI's `RequestUserInputOverlay::submit_answers` in openai/codex
 * `codex-rs/tui/src/bottom_pane/request_user_input/mod.rs` puts the chosen option's label, then
 * any typed text as `user_note: <text>`; to an `isOther` question with options it adds its own
 * last row, `None of the above` ("Optionally, add details in notes (tab)."), which is the only way
 * to answer there in free text, so such an answer is that label then the note. A question without
 * options is typed text alone, `user_note: <text>` (TUI and `app-server-test-client`'s
 * `request_user_input.rs` alike; 0.171.0's tool refuses such questions before they reach a
 * client). A secret question is answered the same way: `isSecret` only masks the typing.
 */
export const USER_NOTE_PREFIX = "user_note: "
/** The TUI's extra row of an `isOther` question (`OTHER_OPTION_LABEL`, 0.171.0). */
export const OTHER_OPTION_LABEL = "None of the above"
/** What a secret question's answer becomes in anything stored or logged. */
export const REDACTED = "[redacted]"

/** The `request_user_input` tool tells the model to mark its recommendation with this label suffix. */
const RECOMMENDED_SUFFIX = "(Recommended)"

export const optionId = (index: number): OptionId => `opt-${index}` as OptionId

/**
 * One native request is one prompt. Options get stable ids by position (`opt-0`, …) because the
 * model names them only by label; labels are kept verbatim, and the "(Recommended)" suffix the
 * tool asks the model for also sets `recommended`. Codex questions are single-choice: neither the question nor
 * the `request_user_input` tool has a multi-select flag. A question without options can only be
 * answered in free text, so it allows free text even if `isOther` is false.
 */
export const promptFromRequest = (params: RequestUserInputParams, promptId: PromptId): UserInputPrompt => {
  const [first, ...rest] = params.questions.map((q) => {
    const options = (q.options ?? []).map((o, i) => ({
      id: optionId(i),
      label: o.label,
      description: o.description,
      ...(o.label.endsWith(RECOMMENDED_SUFFIX) ? { recommended: true } : {})
    }))
    return {
      id: q.id as QuestionId,
      header: q.header,
      label: q.question,
      options,
      multiSelect: false,
      allowFreeform: q.isOther || options.length === 0,
      secret: q.isSecret,
      required: false
    }
  })
  if (first === undefined) throw new Error("promptFromRequest: a request without questions has no prompt")
  return { promptId, questions: [first, ...rest], source: "native", blocking: params.isBlocking ?? true }
}

/**
 * The question has the TUI's `None of the above` row: it has options and takes free text (which
 * with options means `isOther`), and no option of its own already carries that label (then the
 * label would read as that option, so the note goes alone, as `app-server-test-client` sends it).
 */
const hasOtherRow = (question: ResolvedAnswerEntry["question"]): boolean =>
  question.allowFreeform && question.options.length > 0 && !question.options.some((o) => o.label === OTHER_OPTION_LABEL)

/**
 * `{answers: {<questionId>: {answers: [<label> | "None of the above", "user_note: <text>"]}}}`,
 * every question of the prompt present: one left unanswered (skipped, or the whole prompt
 * dismissed `empty`) is `{answers: []}`, as the TUI's `submit_answers` sends it (it inserts every
 * question, its answer list empty when nothing was chosen or typed).
 */
export const nativeAnswer = (
  prompt: UserInputPrompt,
  entries: ReadonlyArray<ResolvedAnswerEntry>
): RequestUserInputResponse => {
  const answers: Record<string, { answers: ReadonlyArray<string> }> = {}
  for (const question of prompt.questions) answers[question.id] = { answers: [] }
  for (const entry of entries) {
    const values = entry.selected.map((o) => o.label)
    if (entry.text !== undefined) {
      if (values.length === 0 && hasOtherRow(entry.question)) values.push(OTHER_OPTION_LABEL)
      values.push(`${USER_NOTE_PREFIX}${entry.text}`)
    }
    answers[entry.question.id] = { answers: values }
  }
  return { answers }
}

/**
 * The canonical entries a native answer map stands for (replay, and the live path through the
 * same code). A value equal to an option label selects it; the TUI's `None of the above` row
 * selects nothing; `user_note: x` is free text `x`; any other value is free text as well (an
 * "Other" answer typed by another client).
 */
export const entriesFromNativeAnswer = (
  prompt: UserInputPrompt,
  response: RequestUserInputResponse
): ReadonlyArray<UserInputAnswerEntry> =>
  prompt.questions.flatMap((question): ReadonlyArray<UserInputAnswerEntry> => {
    const values = response.answers[question.id]?.answers
    // Absent, or present with nothing in it (the TUI's shape for a skipped question): unanswered.
    if (values === undefined || values.length === 0) return []
    const selected: Array<OptionId> = []
    const texts: Array<string> = []
    for (const value of values) {
      const option = question.options.find((o) => o.label === value)
      if (option !== undefined && !selected.includes(option.id)) selected.push(option.id)
      else if (value === OTHER_OPTION_LABEL && hasOtherRow(question)) continue
      else texts.push(value.startsWith(USER_NOTE_PREFIX) ? value.slice(USER_NOTE_PREFIX.length) : value)
    }
    return [
      {
        questionId: question.id,
        ...(selected.length > 0 ? { selectedOptionIds: selected } : {}),
        ...(texts.length > 0 ? { text: texts.join("\n") } : {})
      }
    ]
  })

/** Values by question id as they may be stored: a secret question's value replaced by `redacted`. */
export const redactSecrets = <V>(
  prompt: UserInputPrompt,
  values: Readonly<Record<string, V>>,
  redacted: NoInfer<V>
) => {
  const secret = new Set(prompt.questions.filter((q) => q.secret).map((q) => q.id as string))
  return Object.fromEntries(Object.entries(values).map(([id, value]) => [id, secret.has(id) ? redacted : value]))
}

/** The native answer map as it may be stored: secret questions' values replaced by a marker. */
export const redactNativeAnswer = (
  prompt: UserInputPrompt,
  response: RequestUserInputResponse
): RequestUserInputResponse => ({ answers: redactSecrets(prompt, response.answers, { answers: [REDACTED] }) })
