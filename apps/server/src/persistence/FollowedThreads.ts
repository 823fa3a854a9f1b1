/**
 * Which threads this process's subscribers follow, for an engine where other processes append too
 * (PostgreSQL replicas): their events are read back from the log only for the threads followed
 * here (PgEventStore.ts), not for every thread of the cluster. Each follow is counted, so two
 * followers of one thread both release it; `followEvery` stands for every thread (the thread list's
 * followers). Until the process opts in (`EventStore.followOnly`), every thread counts as followed.
 */
export interface ThreadFollows {
  /** Follows a thread from now on; the function returned ends this follow (once). */
  readonly follow: (threadId: string) => () => void
  /** Follows every thread from now on; the function returned ends this follow (once). */
  readonly followEvery: () => () => void
}

export interface FollowedThreads extends ThreadFollows {
  /** From now on only followed threads count (see `publishes`). */
  readonly optIn: () => void
  /** Whether other writers' events of the thread are to be published here. */
  readonly publishes: (threadId: string) => boolean
}

export const makeFollowedThreads = (): FollowedThreads => {
  let optedIn = false
  let every = 0
  const counts = new Map<string, number>()
  /** A release that counts once, however often it is called (a connection closed twice). */
  const once = (release: () => void) => {
    let done = false
    return () => {
      if (done) return
      done = true
      release()
    }
  }
  return {
    optIn: () => {
      optedIn = true
    },
    publishes: (threadId) => !optedIn || every > 0 || counts.has(threadId),
    follow: (threadId) => {
      counts.set(threadId, (counts.get(threadId) ?? 0) + 1)
      return once(() => {
        const left = (counts.get(threadId) ?? 1) - 1
        if (left > 0) counts.set(threadId, left)
        else counts.delete(threadId)
      })
    },
    followEvery: () => {
      every++
      return once(() => {
        every--
      })
    }
  }
}
