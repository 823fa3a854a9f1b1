import type { PlanbridgeClient } from "@planbridge/client"
import type { OlderTurns as Older, ThreadId } from "@planbridge/contracts"
import { useState } from "react"
import { toastError } from "../state/toasts.ts"

/**
 * Above the timeline when the server sent only the thread's latest turns (a long thread's
 * snapshot window): says there are older ones and loads them a page at a time.
 */
export const OlderTurns = (props: {
  readonly client: PlanbridgeClient
  readonly threadId: ThreadId
  readonly older: Older
}) => {
  const [loading, setLoading] = useState(false)
  const load = () => {
    setLoading(true)
    props.client
      .loadOlderTurns(props.threadId)
      .catch((e: unknown) => toastError("thread.history", e))
      .finally(() => setLoading(false))
  }
  return (
    <div className="older-turns" data-testid="older-turns" data-before={props.older.before}>
      <span className="muted">Older turns are not shown.</span>{" "}
      <button onClick={load} disabled={loading}>
        {loading ? "Loading…" : "Load older turns"}
      </button>
    </div>
  )
}
