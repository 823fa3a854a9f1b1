import type { Command, CommandSuccess, ThreadId } from "@planbridge/contracts"
import type { Inbox } from "./Inbox.ts"
import type { PlanbridgeError } from "./PlanbridgeError.ts"
import { ThreadStore } from "./ThreadStore.ts"

/**
 * The threads a client follows, each with its store, and how each is (re)subscribed: a
 * subscribe sent or resent asks for what the store does not hold yet, so a reconnect or a gap
 * resumes from the store's `seq`, and a resubscribe the server refuses is reported, never
 * swallowed.
 */
export class FollowedThreads {
  private readonly stores = new Map<string, ThreadStore>()
  /** Threads with a resubscribe in flight: further gaps wait for its answer. */
  private readonly resyncing = new Set<string>()
  /** Threads whose first subscribe asks for every event from the start (`afterSeq: 0`). */
  private readonly fromStart = new Set<string>()
  /** How many turns a thread's snapshot should hold, when not the server's default. */
  private readonly windows = new Map<string, number>()

  constructor(
    private readonly inbox: Inbox,
    /** Sends a command on the client's connection (queued until it is open). */
    private readonly send: <C extends Command>(command: C) => Promise<CommandSuccess<C["type"]>>,
    /** A resubscribe failed (not because the client was closed). */
    private readonly onResubscribeError: (threadId: ThreadId, error: PlanbridgeError) => void
  ) {}

  get(threadId: string): ThreadStore | undefined {
    return this.stores.get(threadId)
  }

  /** See `PlanbridgeClient.follow`. */
  async follow(
    threadId: ThreadId,
    options?: { readonly fromStart?: boolean; readonly window?: number }
  ): Promise<ThreadStore> {
    const existing = this.stores.get(threadId)
    if (existing !== undefined) return existing
    const store = new ThreadStore(threadId)
    // The server replays from the start when the thread is short enough, else sends a snapshot.
    if (options?.fromStart === true) this.fromStart.add(threadId)
    if (options?.window !== undefined) this.windows.set(threadId, options.window)
    this.stores.set(threadId, store)
    this.inbox.follow(store)
    try {
      await this.send({ type: "thread.subscribe", threadId })
    } catch (error) {
      this.forget(threadId)
      throw error
    }
    return store
  }

  async unfollow(threadId: ThreadId): Promise<void> {
    if (!this.stores.has(threadId)) return
    this.forget(threadId)
    await this.send({ type: "thread.unsubscribe", threadId })
  }

  /** A subscribe sent (or resent) now asks for what the store does not hold yet. */
  subscribeCommand(threadId: ThreadId): Command {
    const store = this.stores.get(threadId)
    if (store?.ready === true) return { type: "thread.subscribe", threadId, afterSeq: store.seq }
    const window = this.windows.get(threadId)
    return this.fromStart.has(threadId)
      ? { type: "thread.subscribe", threadId, afterSeq: 0 }
      : { type: "thread.subscribe", threadId, ...(window === undefined ? {} : { window }) }
  }

  /** After a `welcome`: resumes every followed thread but those whose subscribe is pending (sent as is). */
  resubscribeAll(except: ReadonlySet<ThreadId>): void {
    for (const store of this.stores.values()) {
      if (!except.has(store.threadId)) this.resubscribe(store)
    }
  }

  /** Catches a store up (after a reconnect or a gap), once at a time per thread. */
  resubscribe(store: ThreadStore): void {
    if (this.resyncing.has(store.threadId)) return
    this.resyncing.add(store.threadId)
    const threadId = store.threadId
    const done = () => void this.resyncing.delete(threadId)
    void this.send({ type: "thread.subscribe", threadId }).then(done, (error: PlanbridgeError) => {
      done()
      this.onResubscribeFailed(store, error)
    })
  }

  /** The connection dropped: the resubscribes in flight will not be answered. */
  dropped(): void {
    this.resyncing.clear()
  }

  /** Everything the client keeps for a followed thread, dropped at once (its store is the app's). */
  private forget(threadId: ThreadId): void {
    this.stores.delete(threadId)
    this.fromStart.delete(threadId)
    this.windows.delete(threadId)
    this.inbox.unfollow(threadId)
  }

  /** A resubscribe the server refused: said to the app, never swallowed (`closed` ends everything anyway). */
  private onResubscribeFailed(store: ThreadStore, error: PlanbridgeError): void {
    if (error.code === "closed") return
    const threadId = store.threadId
    // Only the store that failed: a later follow() of the same id has a store of its own.
    if (error.code === "unknown_thread" && this.stores.get(threadId) === store) {
      this.forget(threadId)
      store.markGone(error)
    }
    this.onResubscribeError(threadId, error)
  }
}
