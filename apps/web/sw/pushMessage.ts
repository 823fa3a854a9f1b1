import type { NotificationAction, NotificationMessage } from "@planbridge/contracts"

/**
 * The push payload checked before it is shown (a type guard: the worker is built without the
 * contracts' runtime). The server sends a `NotificationMessage` whose actions carry `answer`.
 */
const isString = (value: unknown): value is string => typeof value === "string"

const isAction = (value: unknown): value is NotificationAction =>
  typeof value === "object" &&
  value !== null &&
  "questionId" in value &&
  isString(value.questionId) &&
  "optionId" in value &&
  isString(value.optionId) &&
  "label" in value &&
  isString(value.label) &&
  (!("answer" in value) || isString(value.answer))

export const isPushMessage = (value: unknown): value is NotificationMessage =>
  typeof value === "object" &&
  value !== null &&
  "kind" in value &&
  (value.kind === "opened" || value.kind === "resolved") &&
  "tag" in value &&
  isString(value.tag) &&
  "threadId" in value &&
  isString(value.threadId) &&
  "promptId" in value &&
  isString(value.promptId) &&
  "title" in value &&
  isString(value.title) &&
  "body" in value &&
  isString(value.body) &&
  "actions" in value &&
  Array.isArray(value.actions) &&
  value.actions.every(isAction)
