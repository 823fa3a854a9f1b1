import type { RuntimeEvent, RuntimeEventOf } from "@planbridge/contracts"
import { jsonColumn } from "./JsonColumn.ts"
import type { ProjectionStatements } from "./ProjectionStatements.ts"

/** What a batch does to a thread's row: its last sequence and time, and its last state change. */
interface TouchedThread {
  lastSeq: number
  at: string
  state: string | undefined
  flags: ReadonlyArray<string> | undefined
}

/**
 * The thread rows: created on a thread's first event; the session events write their columns at
 * once, while the sequence, time and state a batch leaves are folded and written by `flush`.
 */
export const makeThreadProjection = (s: ProjectionStatements) => {
  /** Threads whose row is known to exist, and what the batch does to them. */
  const knownThreads = new Set<string>()
  const touched = new Map<string, TouchedThread>()

  /** Every event: its thread's row exists, and the batch's last sequence and time are its. */
  const touch = (event: RuntimeEvent, threadSeq: number): void => {
    const threadId = event.threadId
    const at = event.createdAt
    if (!knownThreads.has(threadId)) {
      if (s.threadExists.get<{ thread_id: string }>({ threadId }) === undefined)
        s.insertThread.run({ threadId, provider: event.provider, lastSeq: threadSeq, at })
      knownThreads.add(threadId)
    }
    const thread = touched.get(threadId)
    if (thread === undefined) touched.set(threadId, { lastSeq: threadSeq, at, state: undefined, flags: undefined })
    else {
      thread.lastSeq = threadSeq
      thread.at = at
    }
  }

  const sessionStarted = (event: RuntimeEventOf<"session.started">): void => {
    const threadId = event.threadId
    const q = event.payload
    // It sets the state (not the flags) itself: an earlier state of the batch is overridden.
    touched.get(threadId)!.state = undefined
    s.sessionStarted.run({
      threadId,
      cwd: q.cwd ?? null,
      nativeThreadId: q.nativeThreadId ?? null,
      nativeSessionId: q.nativeSessionId ?? null,
      providerVersion: q.providerVersion ?? null
    })
  }

  const sessionConfigured = (event: RuntimeEventOf<"session.configured">): void => {
    const q = event.payload
    s.sessionConfigured.run({
      threadId: event.threadId,
      capabilities: jsonColumn(q.capabilities),
      mode: q.mode,
      nativeMode: q.nativeMode ?? null,
      model: q.model
    })
  }

  const stateChanged = (event: RuntimeEventOf<"session.state.changed">): void => {
    const pending = touched.get(event.threadId)!
    pending.state = event.payload.state
    pending.flags = event.payload.flags
  }

  const sessionExited = (event: RuntimeEventOf<"session.exited">): void => {
    const threadId = event.threadId
    const pending = touched.get(threadId)!
    pending.state = undefined
    pending.flags = undefined
    s.exited.run({ threadId, exit: jsonColumn(event.payload) })
  }

  const modeChanged = (event: RuntimeEventOf<"mode.changed">): void =>
    void s.modeChanged.run({
      threadId: event.threadId,
      mode: event.payload.mode,
      nativeMode: event.payload.nativeMode ?? null
    })

  const capabilitiesChanged = (event: RuntimeEventOf<"capabilities.changed">): void =>
    void s.capabilitiesChanged.run({ threadId: event.threadId, capabilities: jsonColumn(event.payload.capabilities) })

  /** Writes each touched thread's sequence, time and (when the batch changed it) state. */
  const flush = (): void => {
    for (const [threadId, { lastSeq, at, state, flags }] of touched) {
      s.touchThread.run({
        threadId,
        lastSeq,
        at,
        state: state ?? null,
        flags: flags === undefined ? null : JSON.stringify(flags)
      })
    }
  }

  const clear = (): void => touched.clear()

  /** After a rollback or a rebuild the cached knowledge of existing threads is stale. */
  const forget = (): void => knownThreads.clear()

  return {
    touch,
    sessionStarted,
    sessionConfigured,
    stateChanged,
    sessionExited,
    modeChanged,
    capabilitiesChanged,
    flush,
    clear,
    forget
  }
}
