import { OperatingMode } from "@planbridge/contracts"
import { eq } from "drizzle-orm"
import { Effect, Layer, Schema } from "effect"
import { Database } from "./Database.ts"
import { ResumeTargets, type ResumeTarget } from "./ResumeTargets.ts"
import { storeFailure } from "./StoreError.ts"
import { threads } from "./schema.ts"

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

/**
 * `ResumeTargets` on SQLite: the thread's row for its provider, mode and capabilities, and its
 * newest `session.started` from the log, found through the (thread_id, thread_seq) index.
 */
export const sqliteResumeTargets = Layer.effect(
  ResumeTargets,
  Effect.gen(function* () {
    const { db, sqlite } = yield* Database
    const lastStarted = sqlite.prepare<{ threadId: string }, { event: string }>(
      `SELECT event FROM events WHERE thread_id = @threadId AND json_extract(event, '$.type') = 'session.started'
       ORDER BY thread_seq DESC LIMIT 1`
    )
    const read = (threadId: string): ResumeTarget | undefined => {
      const row = db
        .select({ provider: threads.provider, mode: threads.mode, capabilities: threads.capabilities })
        .from(threads)
        .where(eq(threads.threadId, threadId))
        .get()
      if (row === undefined) return undefined
      const started = lastStarted.get({ threadId })
      const payload = started === undefined ? {} : decodeStarted(started.event).payload
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
    return ResumeTargets.of({
      target: (threadId) =>
        Effect.try({ try: () => read(threadId), catch: storeFailure("read", `read what resumes thread ${threadId}`) })
    })
  })
)
