import type { UserInputPrompt } from "@planbridge/contracts"
import { Context, type Effect } from "effect"
import type { StoreError } from "./StoreError.ts"

/** A prompt as an answer to it needs it: where it lives, whether it still waits, what it asks. */
export interface PromptTarget {
  readonly promptId: string
  readonly threadId: string
  readonly status: "pending" | "resolved"
  /** How it was resolved; null while pending. */
  readonly resolution: string | null
  /** The native request that asked, when the provider's question is one. */
  readonly requestId: string | null
  readonly prompt: UserInputPrompt
}

/** A native request as an answer to it needs it. */
export interface RequestTarget {
  readonly requestId: string
  readonly threadId: string
  readonly status: "pending" | "resolved"
}

/** What answers are routed to: prompts and native requests by id, as their projections hold them. */
export class AnswerTargets extends Context.Service<
  AnswerTargets,
  {
    readonly prompt: (promptId: string) => Effect.Effect<PromptTarget | undefined, StoreError>
    readonly request: (requestId: string) => Effect.Effect<RequestTarget | undefined, StoreError>
  }
>()("planbridge/AnswerTargets") {}
