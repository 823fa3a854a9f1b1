import { useEffect, useState } from "react"
import { enablePush, pushSupported } from "../push.ts"

type PushState = { readonly kind: "off" } | { readonly kind: "on" } | { readonly kind: "failed"; readonly why: string }

/**
 * Browsers grant notifications only from a click: this is that click. Once granted, this browser
 * subscribes to Web Push (push.ts), so that a question reaches it with the tab closed; where push
 * is not offered (no secure context) or fails, the page notifies only while it is open, and says so.
 */
export const NotificationToggle = () => {
  const supported = typeof Notification !== "undefined"
  const [permission, setPermission] = useState(supported ? Notification.permission : "denied")
  const [push, setPush] = useState<PushState>({ kind: "off" })

  useEffect(() => {
    if (permission !== "granted" || !pushSupported()) return
    let live = true
    enablePush().then(
      () => live && setPush({ kind: "on" }),
      (e: unknown) => live && setPush({ kind: "failed", why: e instanceof Error ? e.message : String(e) })
    )
    return () => {
      live = false
    }
  }, [permission])

  if (!supported) return null
  if (permission === "default")
    return (
      <button className="notify" onClick={() => void Notification.requestPermission().then(setPermission)}>
        Notify me when a question waits
      </button>
    )
  if (permission !== "granted") return null
  if (!pushSupported())
    return <p className="muted push-status">Notifications while this page is open (push needs https or loopback).</p>
  if (push.kind === "on")
    return (
      <p className="muted push-status" data-push="on">
        Push notifications on this device: on.
      </p>
    )
  if (push.kind === "failed")
    return (
      <p className="muted push-status" data-push="failed">
        Push is not available ({push.why}); notifications while this page is open.
      </p>
    )
  return null
}
