import type { NotificationAction, NotificationMessage } from "@planbridge/contracts"
import type { OpenMessage } from "./openMessage.ts"
import { isPushMessage } from "./pushMessage.ts"

/**
 * The web client's service worker (served as `/sw.js`), which makes the page an installable PWA
 * and shows Planbridge's Web Push messages (issue 29). A question shows with its options as
 * actions (where the browser supports them); choosing one answers it through
 * `POST /api/push/answer` with the answer capability the push carried for that option. The worker
 * never holds the server's token (PROTOCOL.md, "Answering from a notification"). Opening the
 * notification opens the thread at the prompt; a `resolved` push replaces (closes) the question.
 * Only type imports: the worker is built alone, without the page's chunks.
 */
declare const self: ServiceWorkerGlobalScope

const PUSH_ANSWER_PATH = "/api/push/answer"

/** What a shown notification keeps, to act on a click later. */
interface ShownData {
  readonly threadId: string
  readonly promptId: string
  readonly actions: ReadonlyArray<NotificationAction>
  /** Shown for a `resolved` push: the question no longer waits. */
  readonly resolved: boolean
}

/** `actions` is in the Notifications standard but not in TypeScript's lib. */
interface WithActions extends NotificationOptions {
  readonly actions?: ReadonlyArray<{ readonly action: string; readonly title: string }>
  readonly requireInteraction?: boolean
}

self.addEventListener("install", () => void self.skipWaiting())
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()))

const show = (title: string, options: WithActions) => self.registration.showNotification(title, options)

const shownData = (message: NotificationMessage): ShownData => ({
  threadId: message.threadId,
  promptId: message.promptId,
  actions: message.actions,
  resolved: message.kind === "resolved"
})

const showMessage = async (message: NotificationMessage): Promise<void> => {
  if (message.kind === "resolved") {
    // Under the same tag: the question's notification is replaced, so it is gone wherever it was.
    // (Not closed first: Chromium keeps the id across a replacement, and a close still on its way
    // would close the replacement.)
    return show(message.title, { body: message.body, tag: message.tag, silent: true, data: shownData(message) })
  }
  // A late copy of the question (a server that crashed before it recorded the first as sent sends
  // it again) never reopens one whose replacement is shown: that stays, quietly.
  const replaced = (await self.registration.getNotifications({ tag: message.tag })).find(
    (n) => isShownData(n.data) && n.data.resolved
  )
  if (replaced !== undefined)
    return show(replaced.title, { body: replaced.body, tag: message.tag, silent: true, data: replaced.data })
  // Only options that came with their capability can be answered from here.
  const answerable = message.actions.filter((a) => a.answer !== undefined)
  return show(message.title, {
    body: message.body,
    tag: message.tag,
    requireInteraction: true,
    data: shownData(message),
    actions: answerable.map((a) => ({ action: a.optionId, title: a.label }))
  })
}

self.addEventListener("push", (event) => {
  let payload: unknown
  try {
    payload = event.data?.json()
  } catch {
    payload = undefined
  }
  // A browser requires every push to show something: one it cannot read still says a question waits.
  const work = isPushMessage(payload)
    ? showMessage(payload)
    : show("Planbridge", { body: "A question may wait for you.", tag: "planbridge-unreadable" })
  event.waitUntil(work)
})

const isShownData = (value: unknown): value is ShownData =>
  typeof value === "object" &&
  value !== null &&
  "threadId" in value &&
  typeof value.threadId === "string" &&
  "promptId" in value &&
  typeof value.promptId === "string" &&
  "actions" in value &&
  Array.isArray(value.actions) &&
  "resolved" in value &&
  typeof value.resolved === "boolean"

/** Says in a notification, under the question's tag, why an action did not answer. */
const notAnswered = (tag: string, data: ShownData, why: string) =>
  show("Not answered from the notification", { body: why, tag, data: { ...data, actions: [] } })

/** The `error.code` of an error reply (`{error: {code, message}}`). */
const errorCodeOf = (body: unknown): unknown =>
  typeof body === "object" &&
  body !== null &&
  "error" in body &&
  typeof body.error === "object" &&
  body.error !== null &&
  "code" in body.error
    ? body.error.code
    : undefined

const whyRefused = async (response: Response): Promise<string> => {
  const code = errorCodeOf(await response.json().catch(() => undefined))
  if (code === "client_request_conflict") return "Another choice was already sent from a notification."
  if (code === "already_resolved" || code === "unknown_prompt") return "The question was already answered."
  if (code === "unauthorized") return "This notification can no longer answer; open Planbridge to answer."
  return `The server refused the answer (HTTP ${response.status}); open Planbridge to answer.`
}

/** Prompts this worker is answering now: a second tap meanwhile sends nothing. */
const answering = new Set<string>()

/**
 * Answers the prompt with the chosen option, as the page would, under the prompt's push request
 * id (the server answers a prompt once, whatever reaches it; this only spares a double tap a
 * misleading "already answered").
 */
const answer = async (notification: Notification, data: ShownData, optionId: string): Promise<void> => {
  // Closed first: a second tap on the same notification finds nothing to tap.
  notification.close()
  if (answering.has(data.promptId)) return
  answering.add(data.promptId)
  try {
    await send(notification, data, optionId)
  } finally {
    answering.delete(data.promptId)
  }
}

const send = async (notification: Notification, data: ShownData, optionId: string): Promise<void> => {
  const action = data.actions.find((a) => a.optionId === optionId)
  if (action?.answer === undefined) return notAnswered(notification.tag, data, "That option cannot be answered here.")
  let response: Response
  try {
    response = await fetch(PUSH_ANSWER_PATH, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        promptId: data.promptId,
        questionId: action.questionId,
        optionId: action.optionId,
        answer: action.answer
      })
    })
  } catch {
    return notAnswered(notification.tag, data, "The server could not be reached; open Planbridge to answer.")
  }
  if (!response.ok) return notAnswered(notification.tag, data, await whyRefused(response))
}

/** Opens the thread at the prompt: in an open Planbridge window when there is one, else in a new one. */
const open = async (notification: Notification, data: ShownData): Promise<void> => {
  notification.close()
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true })
  const existing = windows[0]
  if (existing === undefined) {
    const query = new URLSearchParams({ thread: data.threadId, prompt: data.promptId })
    await self.clients.openWindow(`/?${query.toString()}`)
    return
  }
  const message: OpenMessage = { type: "planbridge.open", threadId: data.threadId, promptId: data.promptId }
  existing.postMessage(message)
  // Focusing needs the click's own permission, which a script-made event does not carry.
  await existing.focus().catch(() => undefined)
}

self.addEventListener("notificationclick", (event) => {
  const { notification } = event
  const data: unknown = notification.data
  if (!isShownData(data)) return notification.close()
  const work = event.action === "" ? open(notification, data) : answer(notification, data, event.action)
  try {
    event.waitUntil(work)
  } catch {
    // A script-made event (not the browser's) cannot be extended; the work runs all the same.
  }
})
