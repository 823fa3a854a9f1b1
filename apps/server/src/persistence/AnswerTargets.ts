import type { UserInputPrompt } from "@planbridge/contracts"
import { eq } from "drizzle-orm"
import { Context, Effect, Layer } from "effect"
import { attempt, failsAs, firstRow, StatementPort } from "./StatementPort.ts"
import type { StoreError } from "./StoreError.ts"
import { decodePromptJson } from "./StoredPrompt.ts"

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

const statusOf = (status: string) => (status === "pending" ? ("pending" as const) : ("resolved" as const))

/** `AnswerTargets` on either engine (the `prompts` and `requests` projections). */
export const answerTargets = Layer.effect(
  AnswerTargets,
  Effect.gen(function* () {
    const port = yield* StatementPort
    const { db, tables } = port
    const { prompts, requests } = tables
    return AnswerTargets.of({
      prompt: (promptId) =>
        firstRow(port, db.select().from(prompts).where(eq(prompts.promptId, promptId))).pipe(
          Effect.flatMap((row) =>
            attempt((): PromptTarget | undefined => {
              if (row === undefined) return undefined
              const { threadId, status, resolution, requestId } = row
              const prompt = decodePromptJson(row.prompt)
              return { promptId, threadId, status: statusOf(status), resolution, requestId, prompt }
            })
          ),
          failsAs("read", `read prompt ${promptId}`)
        ),
      request: (requestId) =>
        firstRow(
          port,
          db
            .select({ threadId: requests.threadId, status: requests.status })
            .from(requests)
            .where(eq(requests.requestId, requestId))
        ).pipe(
          Effect.map((row): RequestTarget | undefined =>
            row === undefined ? undefined : { requestId, threadId: row.threadId, status: statusOf(row.status) }
          ),
          failsAs("read", `read request ${requestId}`)
        )
    })
  })
)
