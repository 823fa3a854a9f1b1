import type * as acp from "@agentclientprotocol/sdk/unstable"
import type { PromptQuestion, UserInputAnswerEntry, UserInputPrompt } from "@planbridge/contracts"

/**
 * A Planbridge question card as what an editor can show: an `elicitation/create` form (one field
 * per question, plus a free-text field where the question allows one), or, for an editor without
 * elicitation, one `session/request_permission` per question with an option per choice. Pure:
 * the requests and the answers read back from the editor's replies.
 */

/** The suffix of the free-text field of a question that offers choices too. */
export const FREE_TEXT_SUFFIX = "__text"

/**
 * Why a prompt is not put to the editor as a form: ACP (like MCP) forbids asking for a secret in
 * form mode, and Planbridge has no URL to send the editor to that would not carry its token.
 */
export const secretRefusal = (prompt: UserInputPrompt): string | undefined =>
  prompt.questions.some((q) => q.secret)
    ? "it asks for a secret, which an editor form must not collect: answer it in the Planbridge web UI or " +
      `with \`planbridge prompts answer ${prompt.promptId}\``
    : undefined

const title = (q: PromptQuestion): string => (q.header === undefined ? q.label : `${q.header}: ${q.label}`)

const choiceProperty = (q: PromptQuestion): acp.ElicitationPropertySchema => {
  const oneOf = q.options.map((o) => ({
    const: o.id,
    title: o.label,
    ...(o.description === undefined ? {} : { description: o.description })
  }))
  return q.multiSelect
    ? { type: "array", title: title(q), items: { anyOf: oneOf } }
    : { type: "string", title: title(q), oneOf }
}

/** A form-mode `elicitation/create`, scoped to the session and the question's tool call. */
export interface FormElicitation {
  readonly mode: "form"
  readonly sessionId: string
  readonly toolCallId: string
  readonly message: string
  readonly requestedSchema: acp.ElicitationSchema
}

/** The form of a prompt: field `<question id>` for its choice, `<question id>__text` for free text. */
export const elicitationForm = (sessionId: string, toolCallId: string, prompt: UserInputPrompt): FormElicitation => {
  const properties: Record<string, acp.ElicitationPropertySchema> = {}
  const required: Array<string> = []
  for (const q of prompt.questions) {
    if (q.options.length > 0) {
      properties[q.id] = choiceProperty(q)
      if (q.required && !q.allowFreeform) required.push(q.id)
    }
    if (q.allowFreeform) {
      const key = q.options.length > 0 ? `${q.id}${FREE_TEXT_SUFFIX}` : q.id
      properties[key] = {
        type: "string",
        title: q.options.length > 0 ? `${title(q)} (your own answer instead)` : title(q),
        ...(q.freeformPlaceholder === undefined ? {} : { description: q.freeformPlaceholder })
      }
    }
  }
  return {
    mode: "form",
    sessionId,
    toolCallId,
    message: prompt.title ?? prompt.questions.map((q) => q.label).join("\n"),
    requestedSchema: { type: "object", properties, required }
  }
}

const stringList = (value: unknown): Array<string> =>
  typeof value === "string"
    ? [value]
    : Array.isArray(value)
      ? value.filter((v): v is string => typeof v === "string")
      : []

/**
 * The answers in an accepted form's content. A question with neither a choice nor text is left
 * out (the server then says which required question is missing, with its path).
 */
export const answersOfForm = (
  prompt: UserInputPrompt,
  content: Readonly<Record<string, unknown>>
): Array<UserInputAnswerEntry> =>
  prompt.questions.flatMap((q) => {
    const textKey = q.options.length > 0 ? `${q.id}${FREE_TEXT_SUFFIX}` : q.id
    const freeText = q.allowFreeform ? content[textKey] : undefined
    // The ids come back from the editor: only those of the question's own options count.
    const picked = new Set(q.options.length > 0 ? stringList(content[q.id]) : [])
    const chosen = q.options.filter((o) => picked.has(o.id)).map((o) => o.id)
    const typed = typeof freeText === "string" && freeText.trim().length > 0 ? freeText : undefined
    if (chosen.length === 0 && typed === undefined) return []
    const entry: UserInputAnswerEntry = {
      questionId: q.id,
      ...(chosen.length === 0 ? {} : { selectedOptionIds: chosen }),
      ...(typed === undefined ? {} : { text: typed })
    }
    return [entry]
  })

/** The permission option that skips a question (the agent is told there is no answer). */
export const SKIP_OPTION = "planbridge-skip"

/**
 * One question as a permission request, for an editor without elicitation: an option per choice
 * and one to skip it. A question that only takes free text cannot be asked this way (`undefined`).
 */
export const questionPermission = (
  sessionId: string,
  toolCallId: string,
  q: PromptQuestion
): acp.RequestPermissionRequest | undefined =>
  q.options.length === 0
    ? undefined
    : {
        sessionId,
        toolCall: { toolCallId, title: title(q), kind: "think", status: "pending" },
        options: [
          ...q.options.map((o) => ({ optionId: o.id, name: o.label, kind: "allow_once" as const })),
          { optionId: SKIP_OPTION, name: "Skip this question", kind: "reject_once" as const }
        ]
      }

/** The answer a chosen permission option gives, or undefined for a skipped question. */
export const answerOfPermission = (q: PromptQuestion, chosen: string): UserInputAnswerEntry | undefined => {
  const option = q.options.find((o) => o.id === chosen)
  return option === undefined ? undefined : { questionId: q.id, selectedOptionIds: [option.id] }
}

/** What the editor is told about a question it cannot answer through a permission request. */
export const freeTextFallback = (prompt: UserInputPrompt, q: PromptQuestion): string =>
  `"${q.label}" needs a typed answer, which this editor cannot collect (it offers no elicitation): answer it ` +
  `in the Planbridge web UI or with \`planbridge prompts answer ${prompt.promptId} --text ${q.id}=…\`.`
