import type { PlanbridgeClient, ThreadStore } from "@planbridge/client"
import type { ThreadId, ThreadSummary } from "@planbridge/contracts"
import { useEffect, useState, useSyncExternalStore } from "react"

const noStore = { subscribe: () => () => {}, getSnapshot: () => undefined }

/** How much of the title a row shows (the summary carries up to THREAD_TITLE_CHARS). */
const ROW_TITLE_CHARS = 60

/** The first message on one line, shortened; "New thread" before there is one. */
const rowTitle = (title: string | undefined): string => {
  const line = title?.replace(/\s+/g, " ").trim() ?? ""
  if (line === "") return "New thread"
  return line.length > ROW_TITLE_CHARS ? `${line.slice(0, ROW_TITLE_CHARS - 1)}…` : line
}

/** The last directory of a path: the row's short name for where the thread works. */
const folderOf = (cwd: string): string => cwd.replace(/\/+$/, "").split("/").at(-1) || cwd

/**
 * A thread in the list: its title (first message), provider, state and mode (live from its store
 * once followed, the summary before), working directory and when it last changed.
 */
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
      <span className="thread-row-title" title={t.title}>
        {rowTitle(t.title)}
      </span>
      <span className="thread-row-meta">
        <span className="thread-provider">{t.provider}</span>
        <span className="muted">
          {state}
          {mode !== null ? ` · ${mode}` : ""}
        </span>
        {t.archivedAt !== undefined && <span className="badge">archived</span>}
        {props.pending > 0 && (
          <span className="badge badge-pending" aria-label={`${props.pending} waiting`}>
            {props.pending}
          </span>
        )}
      </span>
      <span className="thread-row-meta muted">
        {t.cwd !== undefined && (
          <code className="thread-cwd" title={t.cwd}>
            {folderOf(t.cwd)}
          </code>
        )}
        <time dateTime={t.updatedAt} title={`started ${new Date(t.createdAt).toLocaleString()}`}>
          {new Date(t.updatedAt).toLocaleString(undefined, { dateStyle: "short", timeStyle: "short" })}
        </time>
      </span>
    </button>
  )
}
