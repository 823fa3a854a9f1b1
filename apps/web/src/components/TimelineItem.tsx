import type { ItemView } from "@planbridge/contracts"
import { Markdown } from "./Markdown.tsx"

/**
 * One item: a message, reasoning (folded), a tool call or command with its output. Once the
 * session has ended nothing is still running: an item the provider never finished is shown
 * "unfinished", not "inProgress".
 */
export const TimelineItem = ({ item, ended }: { readonly item: ItemView; readonly ended: boolean }) => {
  const streaming = item.status === "inProgress" && !ended
  const status = item.status === "inProgress" && ended ? "unfinished" : item.status
  const cls = `item item-${item.itemType} ${streaming ? "streaming" : ""}`
  switch (item.itemType) {
    case "user_message":
      return (
        <div className={cls}>
          <div className="who">You</div>
          <div className="text">{item.text}</div>
        </div>
      )
    case "assistant_message":
    case "plan":
      return (
        <div className={cls}>
          <div className="who">Agent</div>
          <Markdown source={item.text} />
        </div>
      )
    case "reasoning":
      return (
        <details className={cls}>
          <summary>Reasoning{streaming ? "…" : ""}</summary>
          <div className="text">{item.text}</div>
        </details>
      )
    default:
      return (
        <details className={cls}>
          <summary>
            <span className="tool">{item.toolName ?? item.itemType}</span>{" "}
            {item.title !== null && item.title !== item.toolName ? item.title : ""}{" "}
            <span className={`badge badge-${status}`}>{status}</span>
          </summary>
          {item.text !== "" && <pre>{item.text}</pre>}
        </details>
      )
  }
}
