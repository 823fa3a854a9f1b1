import type { PlanbridgeClient } from "@planbridge/client"
import type { ThreadId } from "@planbridge/contracts"
import { useStore } from "../hooks.ts"
import { NotificationToggle } from "./NotificationToggle.tsx"

/** Everything waiting on the user across threads, oldest first; a click opens its thread. */
export const InboxPanel = (props: { readonly client: PlanbridgeClient; readonly onOpen: (id: ThreadId) => void }) => {
  const entries = useStore(props.client.inbox)
  return (
    <aside className="panel inbox" aria-label="Needs input">
      <h2>
        Needs input <span className={`badge ${entries.length > 0 ? "badge-pending" : ""}`}>{entries.length}</span>
      </h2>
      <ul>
        {entries.map((e) => (
          <li key={e.kind === "prompt" ? e.prompt.promptId : e.request.requestId}>
            <button onClick={() => props.onOpen(e.threadId as ThreadId)}>
              {e.kind === "prompt"
                ? `Question: ${e.prompt.prompt.title ?? e.prompt.prompt.questions[0].label}`
                : `Approval: ${e.request.title ?? e.request.kind}`}
            </button>
          </li>
        ))}
      </ul>
      {entries.length === 0 && <p className="muted">Nothing waits on you.</p>}
      <NotificationToggle />
    </aside>
  )
}
