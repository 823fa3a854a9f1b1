import { ThreadId } from "@planbridge/contracts"

/**
 * The open thread is in the address (`/?thread=<id>`): a reload reopens it, and a notification
 * or the CLI can link to it. A query parameter, not the fragment, which carries the token and is
 * cleared as soon as the token is read.
 */
export const threadFromUrl = (): ThreadId | undefined => {
  const id = new URLSearchParams(window.location.search).get("thread")
  try {
    return id === null ? undefined : ThreadId.make(id)
  } catch {
    // Not a thread id (empty, too long): no thread is opened.
    return undefined
  }
}

export const showThreadInUrl = (threadId: ThreadId): void => {
  const search = `?thread=${encodeURIComponent(threadId)}`
  if (window.location.search !== search) window.history.replaceState(null, "", window.location.pathname + search)
}
