import type { OperatingMode } from "@planbridge/contracts"
import { Context, type Effect } from "effect"
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
