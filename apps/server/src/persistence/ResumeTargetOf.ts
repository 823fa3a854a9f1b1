import { OperatingMode } from "@planbridge/contracts"
import { Schema } from "effect"
import type { ResumeTarget } from "./ResumeTargets.ts"

/** The fields of a stored `session.started` a resume reads; anything else is ignored. */
const StartedPayload = Schema.Struct({
  cwd: Schema.optionalKey(Schema.String),
  nativeThreadId: Schema.optionalKey(Schema.String),
  nativeSessionId: Schema.optionalKey(Schema.String),
  providerHome: Schema.optionalKey(Schema.String)
})
const StoredStarted = Schema.fromJsonString(Schema.Struct({ payload: StartedPayload }))
const decodeStarted = Schema.decodeUnknownSync(StoredStarted)
/** Only the one flag: threads recorded before it existed lack it (and were not resumable). */
const decodeResumable = Schema.decodeUnknownSync(
  Schema.fromJsonString(Schema.Struct({ supportsResume: Schema.optionalKey(Schema.Boolean) }))
)
const decodeMode = Schema.decodeUnknownSync(OperatingMode)

/** The columns of a thread's row a resume reads. */
export interface ResumeThreadRow {
  readonly provider: string
  readonly mode: string | null
  readonly capabilities: string | null
}

/**
 * What resumes a thread, from its row and its newest stored `session.started` (the log's
 * `event` JSON, undefined when it has none), whichever engine read them.
 */
export const resumeTargetOf = (
  threadId: string,
  row: ResumeThreadRow,
  startedEvent: string | undefined
): ResumeTarget => {
  const payload = startedEvent === undefined ? {} : decodeStarted(startedEvent).payload
  return {
    threadId,
    provider: row.provider,
    cwd: payload.cwd,
    mode: row.mode === null ? null : decodeMode(row.mode),
    supportsResume: row.capabilities !== null && decodeResumable(row.capabilities).supportsResume === true,
    nativeId: payload.nativeThreadId ?? payload.nativeSessionId,
    providerHome: payload.providerHome
  }
}
