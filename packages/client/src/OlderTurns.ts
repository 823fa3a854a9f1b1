import type { Command, CommandSuccess, ThreadHistoryPage, ThreadId } from "@planbridge/contracts"
import type { FollowedThreads } from "./FollowedThreads.ts"
import { PlanbridgeError } from "./PlanbridgeError.ts"

/**
 * History paging of followed threads (`thread.history`): the page before what a store holds,
 * asked for once per thread however often a UI calls, and dropped when a snapshot replaced the
 * store meanwhile.
 */
export class OlderTurns {
  /** A page of older turns being loaded, per thread. */
  private readonly loading = new Map<string, Promise<ThreadHistoryPage | undefined>>()

  constructor(
    private readonly threads: FollowedThreads,
    /** Sends a command on the client's connection (queued until it is open). */
    private readonly send: <C extends Command>(command: C) => Promise<CommandSuccess<C["type"]>>
  ) {}

  /** See `PlanbridgeClient.loadOlderTurns`. */
  load(threadId: ThreadId, limit?: number): Promise<ThreadHistoryPage | undefined> {
    const store = this.threads.get(threadId)
    if (store === undefined)
      return Promise.reject(
        new PlanbridgeError({ code: "unknown_thread", message: `thread ${threadId} is not followed` })
      )
    const older = store.olderTurns
    if (older === null) return Promise.resolve(undefined)
    const inFlight = this.loading.get(threadId)
    if (inFlight !== undefined) return inFlight
    const generation = store.generation
    // The page is decoded with the command table as it arrives (`bad_frame` when it is not one).
    const loading = this.send({
      type: "thread.history",
      threadId,
      before: older.before,
      ...(limit === undefined ? {} : { limit })
    })
      .then((page) => {
        if (store.generation !== generation || this.threads.get(threadId) !== store) return undefined
        store.addOlder(page)
        return page
      })
      .finally(() => this.loading.delete(threadId))
    this.loading.set(threadId, loading)
    return loading
  }
}
