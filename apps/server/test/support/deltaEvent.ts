/**
 * A Codex assistant-text `content.delta` of `threadId` (turn `t`, item `i`), each with an event id
 * of its own: what the PostgreSQL store tests append many of. `text` defaults to a counter; `raw`
 * as the provider line it came from, when the test needs one.
 */
let n = 0
export const deltaEvent = (threadId: string, text?: string, options: { readonly raw?: boolean } = {}) => {
  const delta = text ?? `d${++n}`
  return {
    eventId: `${threadId}-e${++n}`,
    provider: "codex",
    threadId,
    createdAt: "2026-12-07T00:00:00.000Z",
    turnId: "t",
    itemId: "i",
    type: "content.delta",
    payload: { streamKind: "assistant_text", delta },
    ...(options.raw === true
      ? {
          raw: { source: "codex.app-server.notification", payload: { method: "item/agentMessage/delta", text: delta } }
        }
      : {})
  }
}
