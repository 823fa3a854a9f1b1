import { eq, ne } from "drizzle-orm"
import { Context, Effect, Layer } from "effect"
import { failsAs, StatementPort } from "./StatementPort.ts"
import type { StoreError } from "./StoreError.ts"

/** What a previous process left unfinished, as the projections hold it. */
export interface UnfinishedWork {
  readonly prompts: ReadonlyArray<{
    readonly promptId: string
    readonly threadId: string
    readonly turnId: string | null
    readonly provider: string
  }>
  readonly requests: ReadonlyArray<{
    readonly requestId: string
    readonly threadId: string
    readonly turnId: string | null
    readonly provider: string
  }>
  readonly turns: ReadonlyArray<{ readonly threadId: string; readonly turnId: string; readonly provider: string }>
  /** Threads whose session is not stopped; `lastSeq` is the thread's head when it was read. */
  readonly sessions: ReadonlyArray<{ readonly threadId: string; readonly provider: string; readonly lastSeq: number }>
}

/** The start-up recovery's one question: pending prompts and requests, running turns, open sessions. */
export class RecoveryQueries extends Context.Service<
  RecoveryQueries,
  { readonly unfinished: Effect.Effect<UnfinishedWork, StoreError> }
>()("planbridge/RecoveryQueries") {}

/** `RecoveryQueries` on either engine: four reads of the projections. */
export const recoveryQueries = Layer.effect(
  RecoveryQueries,
  Effect.gen(function* () {
    const port = yield* StatementPort
    const { db, tables } = port
    const { prompts, requests, threads, turns } = tables
    const unfinished = Effect.all({
      prompts: port.rows(
        db
          .select({
            promptId: prompts.promptId,
            threadId: prompts.threadId,
            turnId: prompts.turnId,
            provider: prompts.provider
          })
          .from(prompts)
          .where(eq(prompts.status, "pending"))
      ),
      requests: port.rows(
        db
          .select({
            requestId: requests.requestId,
            threadId: requests.threadId,
            turnId: requests.turnId,
            provider: threads.provider
          })
          .from(requests)
          .innerJoin(threads, eq(threads.threadId, requests.threadId))
          .where(eq(requests.status, "pending"))
      ),
      turns: port.rows(
        db
          .select({ threadId: turns.threadId, turnId: turns.turnId, provider: threads.provider })
          .from(turns)
          .innerJoin(threads, eq(threads.threadId, turns.threadId))
          .where(eq(turns.status, "inProgress"))
      ),
      sessions: port.rows(
        db
          .select({ threadId: threads.threadId, provider: threads.provider, lastSeq: threads.lastSeq })
          .from(threads)
          .where(ne(threads.state, "stopped"))
      )
    }).pipe(failsAs("read", "read what is still pending"))
    return RecoveryQueries.of({ unfinished })
  })
)
