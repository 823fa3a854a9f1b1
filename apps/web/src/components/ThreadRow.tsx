import type { PlanbridgeClient, ThreadStore } from "@planbridge/client"
import type { ThreadId, ThreadSummary } from "@planbridge/contracts"
import { useEffect, useState, useSyncExternalStore } from "react"

const noStore = { subscribe: () => () => {}, getSnapshot: () => undefined }

/** A thread in the list: live state and mode from its store once followed, the summary before. */
export const ThreadRow = (props: {
  readonly client: PlanbridgeClient
  readonly summary: ThreadSummary
  readonly pending: number
  readonly selected: boolean
  readonly onSelect: (id: ThreadId) => void
}) => {
  const t = props.summary
  const [store, setStore] = useState<ThreadStore | undefined>(undefined)
  useEffect(() => {
    let live = true
    props.client.follow(t.threadId, { fromStart: true }).then(
      (s) => live && setStore(s),
      () => undefined
    )
    return () => {
      live = false
    }
  }, [props.client, t.threadId])
  const source = store ?? noStore
  const snapshot = useSyncExternalStore(source.subscribe, source.getSnapshot)
  const state = snapshot?.state ?? t.state
  const mode = snapshot === undefined ? t.mode : snapshot.mode
  return (
    <button
      className={`thread ${props.selected ? "selected" : ""}`}
      data-thread={t.threadId}
      onClick={() => props.onSelect(t.threadId)}
    >
      <span className="thread-provider">{t.provider}</span>
      <span className="muted">
        {state}
        {mode !== null ? ` · ${mode}` : ""}
      </span>
      {props.pending > 0 && (
        <span className="badge badge-pending" aria-label={`${props.pending} waiting`}>
          {props.pending}
        </span>
      )}
    </button>
  )
}
