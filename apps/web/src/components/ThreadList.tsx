import type { PlanbridgeClient } from "@planbridge/client"
import type { ThreadId, ThreadSummary } from "@planbridge/contracts"
import { useStore } from "../hooks.ts"

/** Threads, newest first, each with how many prompts and requests wait on the user. */
export const ThreadList = (props: {
  readonly client: PlanbridgeClient
  readonly threads: ReadonlyArray<ThreadSummary>
  readonly selected: ThreadId | undefined
  readonly onSelect: (id: ThreadId) => void
  readonly onRefresh: () => Promise<void>
}) => {
  const inbox = useStore(props.client.inbox)
  const sorted = [...props.threads].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))
  return (
    <section className="panel thread-list" aria-label="Threads">
      <h2>
        Threads <button onClick={() => void props.onRefresh()}>Refresh</button>
      </h2>
      <ul>
        {sorted.map((t) => {
          const pending = inbox.filter((e) => e.threadId === t.threadId).length
          return (
            <li key={t.threadId}>
              <button
                className={`thread ${t.threadId === props.selected ? "selected" : ""}`}
                data-thread={t.threadId}
                onClick={() => props.onSelect(t.threadId)}
              >
                <span className="thread-provider">{t.provider}</span>
                <span className="muted">
                  {t.state}
                  {t.mode !== null ? ` · ${t.mode}` : ""}
                </span>
                {pending > 0 && (
                  <span className="badge badge-pending" aria-label={`${pending} waiting`}>
                    {pending}
                  </span>
                )}
              </button>
            </li>
          )
        })}
      </ul>
    </section>
  )
}
