import { eq } from "drizzle-orm"
import { Effect, Layer } from "effect"
import { AnswerTargets } from "./AnswerTargets.ts"
import { Database } from "./Database.ts"
import { storeFailure } from "./StoreError.ts"
import { decodePromptJson } from "./StoredPrompt.ts"
import { prompts, requests } from "./schema.ts"

const statusOf = (status: string) => (status === "pending" ? ("pending" as const) : ("resolved" as const))

/** `AnswerTargets` on SQLite (the `prompts` and `requests` projections). */
export const sqliteAnswerTargets = Layer.effect(
  AnswerTargets,
  Effect.gen(function* () {
    const { db } = yield* Database
    return AnswerTargets.of({
      prompt: (promptId) =>
        Effect.try({
          try: () => {
            const row = db.select().from(prompts).where(eq(prompts.promptId, promptId)).get()
            if (row === undefined) return undefined
            const { threadId, status, resolution, requestId } = row
            const prompt = decodePromptJson(row.prompt)
            return { promptId, threadId, status: statusOf(status), resolution, requestId, prompt }
          },
          catch: storeFailure("read", `read prompt ${promptId}`)
        }),
      request: (requestId) =>
        Effect.try({
          try: () => {
            const row = db
              .select({ threadId: requests.threadId, status: requests.status })
              .from(requests)
              .where(eq(requests.requestId, requestId))
              .get()
            return row === undefined ? undefined : { requestId, threadId: row.threadId, status: statusOf(row.status) }
          },
          catch: storeFailure("read", `read request ${requestId}`)
        })
    })
  })
)
