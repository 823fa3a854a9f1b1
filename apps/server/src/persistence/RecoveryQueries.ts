import { Context, type Effect } from "effect"
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
