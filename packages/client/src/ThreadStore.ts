import {
  ThreadState,
  type RuntimeEvent,
  type ThreadHistoryPage,
  type ThreadId,
  type ThreadSnapshot
} from "@planbridge/contracts"
import type { PlanbridgeError } from "./PlanbridgeError.ts"

/**
 * One thread as the client knows it: the server's snapshot plus every event since, folded with
 * the contracts' `ThreadState` (the same rules as the server's projections). `subscribe` and
 * `getSnapshot` follow React's `useSyncExternalStore` contract: the snapshot is the same object
 * until something changed.
 */
export class ThreadStore {
  private state: ThreadState | undefined
  private cached: ThreadSnapshot | undefined
  private gone_: PlanbridgeError | undefined
  private readonly listeners = new Set<() => void>()
  /** Counts `replace`s: a page asked for before one no longer follows what the store holds. */
  private generation_ = 0

  constructor(readonly threadId: ThreadId) {}

  /** The last per-thread sequence applied (0 before anything arrived): the resume cursor. */
  get seq(): number {
    return this.state?.seq ?? 0
  }

  /** Whether a snapshot (or the thread's first events) has arrived. */
  get ready(): boolean {
    return this.state !== undefined
  }

  /**
   * Why the server no longer has this thread (`unknown_thread` when a resubscribe after a
   * reconnect found it missing, e.g. the data dir was replaced); undefined while it is followed.
   * A gone store keeps its last state, readable, and receives nothing more.
   */
  get gone(): PlanbridgeError | undefined {
    return this.gone_
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  readonly getSnapshot = (): ThreadSnapshot | undefined => {
    if (this.cached === undefined && this.state !== undefined) this.cached = this.state.toSnapshot()
    return this.cached
  }

  /** History before what the store holds (`before` asks for it), or null when it holds it all. */
  get olderTurns(): ThreadSnapshot["olderTurns"] {
    return this.state?.olderTurns ?? null
  }

  /** Changes whenever a snapshot replaced the store's state. */
  get generation(): number {
    return this.generation_
  }

  /** A `snapshot` frame replaces everything known. */
  replace(snapshot: ThreadSnapshot): void {
    this.state = ThreadState.fromSnapshot(snapshot)
    this.generation_++
    this.changed()
  }

  /** Adds a page of older history (`thread.history`); what the store holds already is kept. */
  addOlder(page: ThreadHistoryPage): void {
    if (this.state === undefined) return
    this.state.addOlder(page)
    this.changed()
  }

  /**
   * Applies an `event` frame. `applied`: folded; `old`: at or before the cursor (a repeat after a
   * resume), ignored; `gap`: events are missing before it, the caller resubscribes from `seq`.
   */
  apply(seq: number, event: RuntimeEvent): "applied" | "old" | "gap" {
    if (this.state === undefined) {
      // Only a subscription from the very start (afterSeq 0) gets events without a snapshot.
      if (seq !== 1) return "gap"
      this.state = ThreadState.empty(event.threadId, event.provider)
    }
    if (seq <= this.state.seq) return "old"
    if (seq !== this.state.seq + 1) return "gap"
    this.state.apply(seq, event)
    this.changed()
    return "applied"
  }

  /** The client stopped following the thread because the server does not know it any more. */
  markGone(error: PlanbridgeError): void {
    this.gone_ = error
    this.changed()
  }

  private changed(): void {
    this.cached = undefined
    for (const listener of [...this.listeners]) listener()
  }
}
