import type { RuntimeEvent } from "@planbridge/contracts"
import type { ResumeTarget } from "../persistence/ResumeTargets.ts"
import { commandError, type CommandError } from "./CommandErrors.ts"

/** What `thread.resume` answers: `resumed: false` when the thread was live already (nothing started). */
export interface ThreadResumeResult {
  readonly threadId: string
  readonly resumed: boolean
  readonly resumedFrom?: string
}

/** What the server adds to a session's `session.started`: where its state lives, what it resumed. */
export interface StartedStamp {
  readonly providerHome?: string
  readonly resumedFrom?: string
}

/**
 * The adapter reports the native side of `session.started`; the server knows which home it gave
 * the session and which native conversation it asked it to resume, and records both there, so
 * the event log alone holds what the next resume needs.
 */
export const stampStarted = (event: RuntimeEvent, stamp: StartedStamp): RuntimeEvent => {
  if (event.type !== "session.started") return event
  const payload = {
    ...event.payload,
    ...(stamp.resumedFrom === undefined ? {} : { resumed: true, resumedFrom: stamp.resumedFrom }),
    ...(stamp.providerHome === undefined ? {} : { providerHome: stamp.providerHome })
  }
  return { ...event, payload }
}

/**
 * Why a thread cannot be resumed before anything starts, or undefined when it can be tried: its
 * provider must publish `supportsResume` for it and a native conversation must be on record.
 */
export const resumeRefusal = (target: ResumeTarget): CommandError | undefined => {
  if (!target.supportsResume)
    return commandError(
      "unsupported",
      `thread '${target.threadId}' cannot be resumed: its ${target.provider} session did not support it (supportsResume is false)`
    )
  if (target.nativeId === undefined || target.cwd === undefined)
    return commandError(
      "resume_failed",
      `thread '${target.threadId}' has no native session on record to resume; it stays readable, start a new session`
    )
  return undefined
}

/** The `session_not_live` refusal, saying when `thread.resume` would give the thread a session again. */
export const notLive = (threadId: string, resumable: boolean): CommandError =>
  commandError(
    "session_not_live",
    `thread '${threadId}' has no live provider session (it ended or the server restarted)` +
      (resumable ? "; send thread.resume to attach a new session that continues the conversation" : "")
  )
