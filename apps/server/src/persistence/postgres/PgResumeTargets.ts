import { eq } from "drizzle-orm"
import { Effect, Layer } from "effect"
import { resumeTargetOf } from "../ResumeTargetOf.ts"
import { ResumeTargets, type ResumeTarget } from "../ResumeTargets.ts"
import { storeFailure } from "../StoreError.ts"
import { PgDatabase } from "./PgDatabase.ts"
import { threads } from "./schema.ts"

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
      return resumeTargetOf(threadId, row, started?.event)
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
