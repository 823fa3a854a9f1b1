import { threadMatches, type PlanbridgeClient } from "@planbridge/client"
import type { ThreadId, ThreadSummary } from "@planbridge/contracts"
import { useState } from "react"
import { useStore } from "../hooks.ts"
import { toastError } from "../state/toasts.ts"
import { ThreadRow } from "./ThreadRow.tsx"

/**
 * Threads, newest first (live: the client follows the thread list), each with its title, where
 * it works, when it last changed and how many prompts and requests wait on the user. A search
 * over title and working directory (the client's: the followed list holds every thread);
 * archived threads hidden unless asked for.
 */
export const ThreadList = (props: {
  readonly client: PlanbridgeClient
  readonly threads: ReadonlyArray<ThreadSummary>
  readonly selected: ThreadId | undefined
  readonly onSelect: (id: ThreadId) => void
}) => {
  const inbox = useStore(props.client.inbox)
  const [query, setQuery] = useState("")
  const [showArchived, setShowArchived] = useState(false)
  const archivedCount = props.threads.filter((t) => t.archivedAt !== undefined).length
  const shown = props.threads
    .filter((t) => (showArchived || t.archivedAt === undefined) && threadMatches(t, query))
    .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))
  const archive = (threadId: ThreadId, archived: boolean) =>
    props.client.archiveThread(threadId, archived).catch((e: unknown) => toastError("thread.archive", e))
  return (
    <section className="panel thread-list" aria-label="Threads">
      <h2>Threads</h2>
      <input
        type="search"
        className="thread-search"
        aria-label="Search threads"
        placeholder="Search by message or folder"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
      />
      {archivedCount > 0 && (
        <label className="muted thread-archived-toggle">
          <input type="checkbox" checked={showArchived} onChange={(e) => setShowArchived(e.target.checked)} /> Show
          archived ({archivedCount})
        </label>
      )}
      <ul>
        {shown.map((t) => {
          const pending = inbox.filter((e) => e.threadId === t.threadId).length
          return (
            <li key={t.threadId} className="thread-item">
              <ThreadRow
                client={props.client}
                summary={t}
                pending={pending}
                selected={t.threadId === props.selected}
                onSelect={props.onSelect}
              />
              <button
                className="thread-archive"
                aria-label={`${t.archivedAt === undefined ? "Archive" : "Unarchive"} thread`}
                title={t.archivedAt === undefined ? "Archive" : "Unarchive"}
                onClick={() => void archive(t.threadId, t.archivedAt === undefined)}
              >
                {t.archivedAt === undefined ? "Archive" : "Unarchive"}
              </button>
            </li>
          )
        })}
      </ul>
      {shown.length === 0 && props.threads.length > 0 && <p className="muted">No thread matches.</p>}
    </section>
  )
}
