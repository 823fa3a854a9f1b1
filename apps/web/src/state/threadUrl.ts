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

/**
 * The prompt a link opened the thread at (`/?thread=<id>&prompt=<id>`, a notification's deep
 * link): its card is scrolled into view once rendered (revealPrompt.ts).
 */
export const promptFromUrl = (): string | undefined => {
  const id = new URLSearchParams(window.location.search).get("prompt")
  return id === null || id.length === 0 || id.length > 200 ? undefined : id
}

/** The thread's address, with the prompt it is opened at when there is one. */
export const showThreadInUrl = (threadId: ThreadId, promptId?: string): void => {
  const query = new URLSearchParams(
    promptId === undefined ? { thread: threadId } : { thread: threadId, prompt: promptId }
  )
  const search = `?${query.toString()}`
  if (window.location.search !== search) window.history.replaceState(null, "", window.location.pathname + search)
}
