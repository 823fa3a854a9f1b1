import type { ThreadId } from "@planbridge/contracts"

/**
 * The `thread.resume` commands this client has on their way, by thread. The server refuses a
 * turn for a thread whose resumed session is not live yet (`session_not_live`), and a thread's
 * `session.started` arrives before its resume's result (issue 27, item 5): a session command for
 * such a thread waits here for that result, then goes, so "Resume, then send at once" works.
 * The wait is bounded by the resume itself (the server answers it, or the connection ends it).
 */
export class ResumingThreads {
  private readonly resuming = new Map<ThreadId, Promise<void>>()

  /** `resume` is the thread's `thread.resume` on its way. */
  track(threadId: ThreadId, resume: Promise<unknown>): void {
    const settled = resume.then(
      () => undefined,
      () => undefined
    )
    this.resuming.set(threadId, settled)
    void settled.then(() => {
      if (this.resuming.get(threadId) === settled) this.resuming.delete(threadId)
    })
  }

  /** Sends now, or once the thread's resume was answered (whatever the answer: the server then decides). */
  after<A>(threadId: ThreadId, send: () => Promise<A>): Promise<A> {
    const resume = this.resuming.get(threadId)
    return resume === undefined ? send() : resume.then(send)
  }
}
