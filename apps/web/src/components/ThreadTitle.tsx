import type { ThreadSnapshot } from "@planbridge/contracts"
import type { ThreadExtras } from "../state/threadExtras.ts"

/** How much of the first message names the thread. */
const TITLE_CHARS = 80

/**
 * What the thread is about: its first message (as far as the view holds it), where it works and
 * when it started. Older turns not loaded: the earliest message on screen, marked as such.
 */
export const ThreadTitle = (props: { readonly thread: ThreadSnapshot; readonly started: ThreadExtras["started"] }) => {
  const first = props.thread.items.find((i) => i.itemType === "user_message")?.text.trim()
  const title =
    first === undefined || first === ""
      ? "New thread"
      : first.length > TITLE_CHARS
        ? `${first.slice(0, TITLE_CHARS - 1)}…`
        : first
  const { started } = props
  return (
    <div className="thread-title">
      <h2 title={first}>
        {props.thread.olderTurns !== null && first !== undefined ? "… " : ""}
        {title}
      </h2>
      {started !== undefined && (
        <div className="muted thread-meta">
          {started.cwd !== undefined && <code className="thread-cwd">{started.cwd}</code>}{" "}
          <time dateTime={started.at}>{new Date(started.at).toLocaleString()}</time>
        </div>
      )}
    </div>
  )
}
