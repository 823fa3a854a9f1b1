import type { ConnectionStatus } from "@planbridge/client"
import { useEffect, useRef, useState } from "react"

/** "Reconnecting…" while the connection is down; "Resumed" for a moment once it is back. */
export const ConnectionBanner = ({ status }: { readonly status: ConnectionStatus }) => {
  const [resumed, setResumed] = useState(false)
  const previous = useRef(status)
  useEffect(() => {
    const was = previous.current
    previous.current = status
    if (status === "open" && was === "reconnecting") {
      setResumed(true)
      const timer = setTimeout(() => setResumed(false), 4000)
      return () => clearTimeout(timer)
    }
    if (status !== "open") setResumed(false)
    return undefined
  }, [status])

  if (status === "reconnecting" || status === "connecting")
    return (
      <div className="banner banner-warning" role="status">
        Reconnecting…
      </div>
    )
  if (status === "closed")
    return (
      <div className="banner banner-error" role="status">
        Disconnected: reload the page
      </div>
    )
  if (resumed)
    return (
      <div className="banner banner-ok" role="status">
        Resumed: nothing missed
      </div>
    )
  return null
}
