import { isOpenMessage, type OpenMessage } from "../sw/openMessage.ts"
import { clientId } from "./clientId.ts"
import { storedToken } from "./token.ts"

/**
 * Web Push for this browser (issue 29). The service worker (`sw/serviceWorker.ts`, served as
 * `sw.js`) is registered on every load: it makes the page installable and acts on notification
 * clicks. Push is turned on from the notification toggle (a browser grants notifications only
 * from a click): the browser subscribes with the server's VAPID key and the subscription is
 * registered through the operator API (`POST /api/notifications/sinks`) with this browser's
 * client id, so that an answer from its notifications reads "by you, from a notification on
 * this device". Browsers offer both only in a secure context (https, or http on loopback).
 */

export const pushSupported = (): boolean =>
  typeof navigator !== "undefined" && "serviceWorker" in navigator && typeof PushManager !== "undefined"

export const registerServiceWorker = (): void => {
  if (!("serviceWorker" in navigator)) return
  // A failed registration leaves the page as it was: in-page notifications only.
  navigator.serviceWorker.register("./sw.js").catch(() => undefined)
}

let pushOn = false

/** Whether this browser's pushes are on: the page then raises no notifications of its own. */
export const pushEnabled = (): boolean => pushOn

const api = async (path: string, init: { readonly method?: string; readonly body?: unknown } = {}) => {
  const token = storedToken()
  if (token === undefined) throw new Error("no token in this tab")
  const response = await fetch(path, {
    method: init.method ?? "GET",
    headers: {
      authorization: `Bearer ${token}`,
      ...(init.body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
  })
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`)
  const body: unknown = await response.json()
  return body
}

const base64url = (buffer: ArrayBuffer): string =>
  btoa(String.fromCharCode(...new Uint8Array(buffer)))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/u, "")

/** Subscribes this browser (again, if the server's key changed) and registers it with the server. */
export const enablePush = async (): Promise<void> => {
  const keyReply = await api("./api/notifications/vapid-public-key")
  if (typeof keyReply !== "object" || keyReply === null || !("publicKey" in keyReply))
    throw new Error("the server sent no VAPID key")
  const publicKey = String(keyReply.publicKey)
  const registration = await navigator.serviceWorker.ready
  let subscription = await registration.pushManager.getSubscription()
  const key = subscription?.options.applicationServerKey
  if (subscription !== null && (key === null || key === undefined || base64url(key) !== publicKey)) {
    await subscription.unsubscribe()
    subscription = null
  }
  subscription ??= await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: publicKey })
  const json = subscription.toJSON()
  await api("./api/notifications/sinks", {
    method: "POST",
    body: {
      kind: "webpush",
      subscription: { endpoint: json.endpoint, keys: { p256dh: json.keys?.p256dh, auth: json.keys?.auth } },
      clientId
    }
  })
  pushOn = true
}

/** Calls `handler` when this browser's notification is opened while a Planbridge window is open. */
export const onOpenFromNotification = (handler: (message: OpenMessage) => void): (() => void) => {
  if (!("serviceWorker" in navigator)) return () => undefined
  const listener = (event: MessageEvent) => {
    if (isOpenMessage(event.data)) handler(event.data)
  }
  navigator.serviceWorker.addEventListener("message", listener)
  return () => navigator.serviceWorker.removeEventListener("message", listener)
}
