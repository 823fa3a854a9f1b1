import type { PlanbridgeClient } from "@planbridge/client"
import type { ThreadId, ThreadSummary } from "@planbridge/contracts"
import { useStore } from "../hooks.ts"
import { ThreadRow } from "./ThreadRow.tsx"

/** Threads, newest first (live: the client follows the thread list), each with how many prompts and requests wait on the user. */
export const ThreadList = (props: {
  readonly client: PlanbridgeClient
  readonly threads: ReadonlyArray<ThreadSummary>
  readonly selected: ThreadId | undefined
  readonly onSelect: (id: ThreadId) => void
}) => {
  const inbox = useStore(props.client.inbox)
  const sorted = [...props.threads].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))
  return (
    <section className="panel thread-list" aria-label="Threads">
      <h2>Threads</h2>
      <ul>
        {sorted.map((t) => {
          const pending = inbox.filter((e) => e.threadId === t.threadId).length
          return (
            <li key={t.threadId}>
              <ThreadRow
                client={props.client}
                summary={t}
                pending={pending}
                selected={t.threadId === props.selected}
                onSelect={props.onSelect}
              />
            </li>
          )
        })}
      </ul>
    </section>
  )
}
