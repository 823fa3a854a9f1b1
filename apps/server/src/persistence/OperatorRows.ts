import { PlanStep, ResolvedBy, UserInputAnswerEntry, type PlanSnapshot } from "@planbridge/contracts"
import { Schema } from "effect"
import type { PlanRevision, PromptDetail, PromptView } from "./OperatorQueries.ts"
import { decodePromptJson } from "./StoredPrompt.ts"
import type { planSnapshots, prompts, requests } from "./schema.ts"

const decodeAnswers = Schema.decodeUnknownSync(Schema.Array(UserInputAnswerEntry))
const decodeSteps = Schema.decodeUnknownSync(Schema.Array(PlanStep))
const decodeResolvedBy = Schema.decodeUnknownSync(ResolvedBy)

/**
 * What the operator queries answer, from the rows either engine read (PostgreSQL's rows are
 * SQLite's: postgres/PgStatementBuilder.ts checks it).
 */
export const promptViewOf = (row: typeof prompts.$inferSelect): PromptView => ({
  promptId: row.promptId,
  threadId: row.threadId,
  turnId: row.turnId,
  provider: row.provider,
  status: row.status === "pending" ? "pending" : "resolved",
  resolution: row.resolution,
  prompt: decodePromptJson(row.prompt),
  answers: row.answers === null ? null : decodeAnswers(JSON.parse(row.answers)),
  reason: row.reason,
  createdAt: row.createdAt,
  resolvedAt: row.resolvedAt,
  resolvedBy: row.resolvedBy === null ? null : decodeResolvedBy(JSON.parse(row.resolvedBy))
})

/** A prompt with its native request (undefined: none) and the events about either, in log order. */
export const promptDetailOf = (
  row: typeof prompts.$inferSelect,
  request: typeof requests.$inferSelect | undefined,
  timeline: PromptDetail["timeline"]
): PromptDetail => ({
  ...promptViewOf(row),
  request:
    request === undefined
      ? null
      : {
          requestId: request.requestId,
          nativeMethod: request.nativeMethod,
          nativeId: request.nativeId,
          status: request.status
        },
  raw: timeline.find((t) => t.event.eventId === row.requestedEventId)?.event.raw ?? null,
  timeline
})

export const planRevisionOf = (row: typeof planSnapshots.$inferSelect): PlanRevision => ({
  revision: row.revision,
  isLatest: row.isLatest,
  plan: {
    explanation: row.explanation,
    steps: decodeSteps(JSON.parse(row.steps)),
    source: row.source as PlanSnapshot["source"]
  },
  eventId: row.eventId,
  createdAt: row.createdAt
})
