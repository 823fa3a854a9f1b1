import type { PromptView, RequestView } from "@planbridge/contracts"
import type { ThreadList } from "./ThreadList.ts"
import type { ThreadStore } from "./ThreadStore.ts"

/** A pending prompt or request of some followed thread, the oldest first. */
export type InboxEntry =
  | { readonly kind: "prompt"; readonly threadId: string; readonly prompt: PromptView }
  | { readonly kind: "request"; readonly threadId: string; readonly request: RequestView }

/**
 * Everything waiting on a person across the followed threads and, once the client follows the
 * thread list (`followThreadList`), across every thread: pending prompts, and pending requests
 * that are not a prompt's transport (those show as their prompt). A followed thread's come from
 * its store, the others' from the list. Same store contract as `ThreadStore` (`subscribe` /
 * `getSnapshot`).
 */
export class Inbox {
  private cached: ReadonlyArray<InboxEntry> | undefined
  private readonly listeners = new Set<() => void>()
  private readonly stores = new Map<string, { readonly store: ThreadStore; readonly stop: () => void }>()
  private list: { readonly list: ThreadList; readonly stop: () => void } | undefined

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  readonly getSnapshot = (): ReadonlyArray<InboxEntry> => {
    if (this.cached === undefined) this.cached = this.compute()
    return this.cached
  }

  follow(store: ThreadStore): void {
    if (this.stores.has(store.threadId)) return
    this.stores.set(store.threadId, { store, stop: store.subscribe(() => this.changed()) })
    this.changed()
  }

  /** Adds what waits in threads the client does not follow, from the thread list. */
  followList(list: ThreadList): void {
    this.list?.stop()
    this.list = { list, stop: list.subscribe(() => this.changed()) }
    this.changed()
  }

  unfollowList(): void {
    this.list?.stop()
    this.list = undefined
    this.changed()
  }

  unfollow(threadId: string): void {
    this.stores.get(threadId)?.stop()
    if (this.stores.delete(threadId)) this.changed()
  }

  private compute(): ReadonlyArray<InboxEntry> {
    const entries: Array<InboxEntry & { readonly at: string }> = []
    for (const { store } of this.stores.values()) {
      const snapshot = store.getSnapshot()
      if (snapshot === undefined) continue
      for (const prompt of snapshot.prompts) {
        if (prompt.status === "pending")
          entries.push({ kind: "prompt", threadId: snapshot.threadId, prompt, at: prompt.createdAt })
      }
      for (const request of snapshot.requests) {
        if (request.status === "pending" && request.promptId === null) {
          entries.push({ kind: "request", threadId: snapshot.threadId, request, at: request.createdAt })
        }
      }
    }
    for (const { thread, prompts, requests } of this.list?.list.getSnapshot() ?? []) {
      if (this.stores.get(thread.threadId)?.store.ready === true) continue
      for (const prompt of prompts)
        entries.push({ kind: "prompt", threadId: thread.threadId, prompt, at: prompt.createdAt })
      for (const request of requests)
        entries.push({ kind: "request", threadId: thread.threadId, request, at: request.createdAt })
    }
    return entries.sort((a, b) => a.at.localeCompare(b.at)).map(({ at: _at, ...entry }) => entry)
  }

  private changed(): void {
    this.cached = undefined
    for (const listener of [...this.listeners]) listener()
  }
}
