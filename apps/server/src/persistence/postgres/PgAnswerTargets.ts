import { eq } from "drizzle-orm"
import { Effect, Layer } from "effect"
import { AnswerTargets } from "../AnswerTargets.ts"
import { storeFailure } from "../StoreError.ts"
import { decodePromptJson } from "../StoredPrompt.ts"
import { PgDatabase } from "./PgDatabase.ts"
import { prompts, requests } from "./schema.ts"

const statusOf = (status: string) => (status === "pending" ? ("pending" as const) : ("resolved" as const))

/** `AnswerTargets` on PostgreSQL (the `prompts` and `requests` projections). */
export const pgAnswerTargets = Layer.effect(
  AnswerTargets,
  Effect.gen(function* () {
    const { db } = yield* PgDatabase
    return AnswerTargets.of({
      prompt: (promptId) =>
        Effect.tryPromise({
          try: async () => {
            const [row] = await db.select().from(prompts).where(eq(prompts.promptId, promptId))
            if (row === undefined) return undefined
            const { threadId, status, resolution, requestId } = row
            const prompt = decodePromptJson(row.prompt)
            return { promptId, threadId, status: statusOf(status), resolution, requestId, prompt }
          },
          catch: storeFailure("read", `read prompt ${promptId}`)
        }),
      request: (requestId) =>
        Effect.tryPromise({
          try: async () => {
            const [row] = await db
              .select({ threadId: requests.threadId, status: requests.status })
              .from(requests)
              .where(eq(requests.requestId, requestId))
            return row === undefined ? undefined : { requestId, threadId: row.threadId, status: statusOf(row.status) }
          },
          catch: storeFailure("read", `read request ${requestId}`)
        })
    })
  })
)
