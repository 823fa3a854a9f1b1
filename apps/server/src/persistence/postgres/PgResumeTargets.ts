import { OperatingMode } from "@planbridge/contracts"
import { eq } from "drizzle-orm"
import { Effect, Layer, Schema } from "effect"
import { ResumeTargets, type ResumeTarget } from "../ResumeTargets.ts"
import { storeFailure } from "../StoreError.ts"
import { PgDatabase } from "./PgDatabase.ts"
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

/** `ResumeTargets` on PostgreSQL: as on SQLite (SqliteResumeTargets.ts), the thread's row and its newest `session.started`. */
export const pgResumeTargets = Layer.effect(
  ResumeTargets,
  Effect.gen(function* () {
    const { db, pool } = yield* PgDatabase
    const read = async (threadId: string): Promise<ResumeTarget | undefined> => {
      const [row] = await db
        .select({ provider: threads.provider, mode: threads.mode, capabilities: threads.capabilities })
        .from(threads)
        .where(eq(threads.threadId, threadId))
      if (row === undefined) return undefined
      // Found in the text and checked once parsed: PostgreSQL's json operators refuse a row that
      // holds a \u0000 escape anywhere (a NUL a provider streamed).
      const candidates = (
        await pool.query<{ event: string }>(
          `select event from events where thread_id = $1 and strpos(event, '"type":"session.started"') > 0
           order by thread_seq desc`,
          [threadId]
        )
      ).rows
      const started = candidates.find((c) => (JSON.parse(c.event) as { type?: unknown }).type === "session.started")
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
        Effect.tryPromise({
          try: () => read(threadId),
          catch: storeFailure("read", `read what resumes thread ${threadId}`)
        })
    })
  })
)
