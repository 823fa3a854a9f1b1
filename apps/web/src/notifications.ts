import type { Inbox } from "@planbridge/client"
import { pushEnabled } from "./push.ts"

/**
 * A browser notification for each prompt or request that newly needs the user, while the tab is
 * hidden, once the user allowed them (`NotificationToggle`), unless this browser's pushes are on
 * (push.ts): the service worker shows those, with the question's options.
 */
export const notifyNewEntries = (inbox: Inbox): (() => void) => {
  const seen = new Set(inbox.getSnapshot().map(keyOf))
  return inbox.subscribe(() => {
    for (const entry of inbox.getSnapshot()) {
      const key = keyOf(entry)
      if (seen.has(key)) continue
      seen.add(key)
      if (typeof Notification === "undefined" || document.visibilityState === "visible" || pushEnabled()) continue
      const body =
        entry.kind === "prompt"
          ? (entry.prompt.prompt.title ?? entry.prompt.prompt.questions[0].label)
          : (entry.request.title ?? "The agent asks for approval")
      if (Notification.permission === "granted") new Notification("Planbridge needs your input", { body })
    }
  })
}

const keyOf = (entry: ReturnType<Inbox["getSnapshot"]>[number]): string =>
  entry.kind === "prompt" ? entry.prompt.promptId : entry.request.requestId
