import type { OperatingMode } from "@planbridge/contracts"
import { and, desc, eq } from "drizzle-orm"
import { Context, Effect, Layer } from "effect"
import { resumeTargetOf } from "./ResumeTargetOf.ts"
import { attempt, failsAs, firstRow, StatementPort } from "./StatementPort.ts"
import type { StoreError } from "./StoreError.ts"

/**
 * What a resume needs of a thread, read from the event log itself (its last `session.started`),
 * so it is there for as long as the thread is, `planbridge rebuild` or not.
 */
export interface ResumeTarget {
  readonly threadId: string
  readonly provider: string
  readonly cwd: string | undefined
  /** The mode the thread was last in (`null` before any `session.configured`). */
  readonly mode: OperatingMode | null
  /** `supportsResume` as last published for the thread (false for threads from before the flag). */
  readonly supportsResume: boolean
  /** The native conversation to resume: Codex's thread id, else the Claude or ACP session id. */
  readonly nativeId: string | undefined
  /** The directory holding the provider's state for the thread, when Planbridge chose one. */
  readonly providerHome: string | undefined
}

export class ResumeTargets extends Context.Service<
  ResumeTargets,
  {
    /** Undefined when there is no such thread. */
    readonly target: (threadId: string) => Effect.Effect<ResumeTarget | undefined, StoreError>
  }
>()("planbridge/ResumeTargets") {}

/** What a `session.started` event's JSON holds, as the log writes it (EventJson.ts: `JSON.stringify`). */
const STARTED_TYPE = `"type":${JSON.stringify("session.started")}`

/**
 * `ResumeTargets` on either engine: the thread's row for its provider, mode and capabilities,
 * and its newest `session.started` from the log, through the (thread_id, thread_seq) index. The
 * log's text is searched for the type as JSON writes it and each candidate checked once parsed:
 * PostgreSQL's json operators refuse a row that holds a \u0000 escape anywhere (a NUL a provider
 * streamed), and one query serves both engines.
 */
export const resumeTargets = Layer.effect(
  ResumeTargets,
  Effect.gen(function* () {
    const port = yield* StatementPort
    const { db, tables, dialect } = port
    const { threads, events } = tables
    const read = (threadId: string) =>
      Effect.gen(function* () {
        const row = yield* firstRow(
          port,
          db
            .select({ provider: threads.provider, mode: threads.mode, capabilities: threads.capabilities })
            .from(threads)
            .where(eq(threads.threadId, threadId))
        )
        if (row === undefined) return undefined
        const candidates = yield* port.rows(
          db
            .select({ event: events.event })
            .from(events)
            .where(and(eq(events.threadId, threadId), dialect.contains(events.event, STARTED_TYPE)))
            .orderBy(desc(events.threadSeq))
        )
        return yield* attempt((): ResumeTarget => {
          const started = candidates.find((c) => (JSON.parse(c.event) as { type?: unknown }).type === "session.started")
          return resumeTargetOf(threadId, row, started?.event)
        })
      })
    return ResumeTargets.of({
      target: (threadId) => read(threadId).pipe(failsAs("read", `read what resumes thread ${threadId}`))
    })
  })
)
