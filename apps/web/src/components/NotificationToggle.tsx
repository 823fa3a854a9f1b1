import { useState } from "react"

/** Browsers grant notifications only from a click: this is that click. */
export const NotificationToggle = () => {
  const supported = typeof Notification !== "undefined"
  const [permission, setPermission] = useState(supported ? Notification.permission : "denied")
  if (!supported || permission !== "default") return null
  return (
    <button className="notify" onClick={() => void Notification.requestPermission().then(setPermission)}>
      Notify me when a question waits
    </button>
  )
}
