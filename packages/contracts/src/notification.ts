import { Schema } from "effect"
import type { RuntimeEvent } from "./events.ts"
import { OptionId, PromptId, QuestionId, ThreadId } from "./ids.ts"

/**
 * What a notification sink receives (issue 29): a Web Push payload (encrypted to the browser's
 * subscription) or a webhook's JSON body. `opened` says a question waits; `resolved` replaces it
 * ("no longer waiting") under the same `tag`, so a browser closes the first. A question with a
 * secret in it is named only as waiting: no title, no text, no options. Bounded (`NOTIFICATION_BOUNDS`)
 * so that it fits a push service's 4 KiB.
 */
export const NOTIFICATION_BOUNDS = { titleChars: 120, bodyChars: 400, actions: 3, actionLabelChars: 40 } as const

export const NotificationAction = Schema.Struct({
  questionId: QuestionId,
  optionId: OptionId,
  label: Schema.String.check(Schema.isMaxLength(NOTIFICATION_BOUNDS.actionLabelChars)),
  /**
   * Web Push only, added as it is sent (never stored): the capability that answers the prompt
   * with this option from the notification (`POST /api/push/answer`); webhooks never get one.
   */
  answer: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(200)))
})
export type NotificationAction = typeof NotificationAction.Type

export const NotificationMessage = Schema.Struct({
  kind: Schema.Literals(["opened", "resolved"]),
  /** One per prompt: the `resolved` message replaces the `opened` one. */
  tag: Schema.String,
  threadId: ThreadId,
  promptId: PromptId,
  title: Schema.String.check(Schema.isMaxLength(NOTIFICATION_BOUNDS.titleChars)),
  body: Schema.String.check(Schema.isMaxLength(NOTIFICATION_BOUNDS.bodyChars)),
  /** `opened`, one single-choice question, no secret: its options, to answer from the notification. */
  actions: Schema.Array(NotificationAction).check(Schema.isMaxLength(NOTIFICATION_BOUNDS.actions)),
  /** `resolved`: how it ended (a `PromptResolutionKind`). */
  resolution: Schema.optionalKey(Schema.String)
})
export type NotificationMessage = typeof NotificationMessage.Type

const cut = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`)

export const notificationTag = (promptId: string): string => `planbridge-prompt:${promptId}`

/** The message of a prompt event; undefined for any other event. */
export const notificationMessageOf = (event: RuntimeEvent): NotificationMessage | undefined => {
  const base = { threadId: event.threadId }
  if (event.type === "user-input.resolved") {
    const { promptId, resolution } = event.payload
    return {
      ...base,
      kind: "resolved",
      tag: notificationTag(promptId),
      promptId,
      title: "No longer waiting",
      body: `The question was ${resolution === "answered" ? "answered" : `resolved (${resolution})`}.`,
      actions: [],
      resolution
    }
  }
  if (event.type !== "user-input.requested") return undefined
  const { prompt } = event.payload
  const opened = { ...base, kind: "opened" as const, tag: notificationTag(prompt.promptId), promptId: prompt.promptId }
  if (prompt.questions.some((q) => q.secret)) return { ...opened, title: "A question waits", body: "", actions: [] }
  const [first, ...rest] = prompt.questions
  const more = rest.length === 0 ? "" : ` (+${rest.length} more)`
  const single = rest.length === 0 && !first.multiSelect
  return {
    ...opened,
    title: cut(prompt.title ?? first.header ?? "The agent asks", NOTIFICATION_BOUNDS.titleChars),
    body: cut(`${first.label}${more}`, NOTIFICATION_BOUNDS.bodyChars),
    actions: single
      ? first.options.slice(0, NOTIFICATION_BOUNDS.actions).map((o) => ({
          questionId: first.id,
          optionId: o.id,
          label: cut(o.label, NOTIFICATION_BOUNDS.actionLabelChars)
        }))
      : []
  }
}
