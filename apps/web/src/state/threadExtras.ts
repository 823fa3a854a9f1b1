import type { PlanSnapshot, RuntimeEvent, ThreadId } from "@planbridge/contracts"
import { ExternalStore } from "./ExternalStore.ts"
import type { SessionExit } from "./sessionEnd.ts"

export interface ChecklistRevision {
  readonly turnId: string
  readonly revision: number
  readonly plan: PlanSnapshot
  readonly at: string
}

export interface ThreadExtras {
  /** Every checklist snapshot seen, oldest first (the thread state keeps only the latest). */
  readonly checklist: ReadonlyArray<ChecklistRevision>
  /** How the last provider session ended; cleared when a new (resumed) session starts. */
  readonly lastExit: SessionExit | undefined
  /** The working directory and start time of the thread's first session, when replayed. */
  readonly started: { readonly cwd: string | undefined; readonly at: string } | undefined
}

const empty: ThreadExtras = { checklist: [], lastExit: undefined, started: undefined }

/**
 * What the web client keeps from the event stream beyond the folded thread state. Threads are
 * followed from their first event where the server still replays it, so this is their history.
 */
export class ThreadExtrasStore {
  private readonly stores = new Map<string, ExternalStore<ThreadExtras>>()

  of(threadId: string): ExternalStore<ThreadExtras> {
    let store = this.stores.get(threadId)
    if (store === undefined) {
      store = new ExternalStore(empty)
      this.stores.set(threadId, store)
    }
    return store
  }

  record(threadId: ThreadId, event: RuntimeEvent): void {
    if (event.type === "turn.plan.updated") {
      this.of(threadId).update((x) => {
        const revision = x.checklist.filter((r) => r.turnId === event.turnId).length + 1
        const entry = { turnId: event.turnId, revision, plan: event.payload.plan, at: event.createdAt }
        return { ...x, checklist: [...x.checklist, entry] }
      })
    } else if (event.type === "session.exited") {
      const lastExit = { exitKind: event.payload.exitKind, message: event.payload.message }
      this.of(threadId).update((x) => ({ ...x, lastExit }))
    } else if (event.type === "session.started") {
      const first = { cwd: event.payload.cwd, at: event.createdAt }
      this.of(threadId).update((x) => ({ ...x, lastExit: undefined, started: x.started ?? first }))
    }
  }
}
