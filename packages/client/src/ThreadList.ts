import type { ThreadListEntry, ThreadSummary } from "@planbridge/contracts"

/**
 * Whether a thread matches a search: every word of `query` (case-insensitive) in its title (its
 * first message) or its working directory. An empty query matches every thread. Searching is the
 * client's: the followed list already holds every thread's summary, so a keystroke costs a pass
 * over memory, not a round trip.
 */
export const threadMatches = (thread: ThreadSummary, query: string): boolean => {
  const words = query
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w !== "")
  if (words.length === 0) return true
  const haystack = `${thread.title ?? ""}\n${thread.cwd ?? ""}`.toLowerCase()
  return words.every((w) => haystack.includes(w))
}

/**
 * The thread list the server pushes (`threads.subscribe`): every thread with its pending prompts
 * and requests, the most recently changed first. Same store contract as `ThreadStore`
 * (`subscribe` / `getSnapshot`, the same array until something changed).
 */
export class ThreadList {
  private readonly entries = new Map<string, ThreadListEntry>()
  /** Entries that arrived while a `threads.subscribe` was pending: never older than its result. */
  private arrivedEarly: Map<string, ThreadListEntry> | undefined
  private cached: ReadonlyArray<ThreadListEntry> | undefined
  private readonly listeners = new Set<() => void>()

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  readonly getSnapshot = (): ReadonlyArray<ThreadListEntry> => {
    if (this.cached === undefined)
      this.cached = [...this.entries.values()].sort((a, b) => b.thread.updatedAt.localeCompare(a.thread.updatedAt))
    return this.cached
  }

  /** A `threads.subscribe` was sent: what arrives until its result is kept over the result. */
  subscribing(): void {
    this.arrivedEarly = new Map()
  }

  /** The result of `threads.subscribe`: the whole list, then what arrived while it was on its way. */
  replaceAll(entries: ReadonlyArray<ThreadListEntry>): void {
    this.entries.clear()
    for (const entry of entries) this.entries.set(entry.thread.threadId, entry)
    for (const [threadId, entry] of this.arrivedEarly ?? []) this.entries.set(threadId, entry)
    this.arrivedEarly = undefined
    this.changed()
  }

  /** A `threadEntry` frame: the thread's entry as it is now. */
  put(entry: ThreadListEntry): void {
    this.arrivedEarly?.set(entry.thread.threadId, entry)
    this.entries.set(entry.thread.threadId, entry)
    this.changed()
  }

  private changed(): void {
    this.cached = undefined
    for (const listener of [...this.listeners]) listener()
  }
}
