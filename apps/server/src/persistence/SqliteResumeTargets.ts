import { eq } from "drizzle-orm"
import { Effect, Layer } from "effect"
import { Database } from "./Database.ts"
import { resumeTargetOf } from "./ResumeTargetOf.ts"
import { ResumeTargets, type ResumeTarget } from "./ResumeTargets.ts"
import { storeFailure } from "./StoreError.ts"
import { threads } from "./schema.ts"

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
      return resumeTargetOf(threadId, row, lastStarted.get({ threadId })?.event)
    }
    return ResumeTargets.of({
      target: (threadId) =>
        Effect.try({ try: () => read(threadId), catch: storeFailure("read", `read what resumes thread ${threadId}`) })
    })
  })
)
