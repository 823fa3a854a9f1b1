import { PlanSnapshot, PlanStep, UserInputAnswerEntry, type RuntimeEvent, type UserInputPrompt } from "@planbridge/contracts"
import { and, asc, desc, eq, lte, or, sql, type SQL } from "drizzle-orm"
import { Context, Effect, Layer, Schema } from "effect"
import { Database } from "./Database.ts"
import { decodePersistedEvent } from "./PersistedEvent.ts"
import { decodePromptJson } from "./StoredPrompt.ts"
import { events, planSnapshots, prompts, requests } from "./schema.ts"

export class PromptNotFound extends Schema.TaggedError<PromptNotFound>()("PromptNotFound", {
  promptId: Schema.String,
  message: Schema.String
}) {}

export interface PromptFilter {
  readonly status?: "pending" | "resolved"
  readonly provider?: string
  readonly threadId?: string
  /** Only prompts created at least this long ago. */
  readonly olderThanMs?: number
  readonly limit?: number
}

export interface PromptView {
  readonly promptId: string
  readonly threadId: string
  readonly turnId: string | null
  readonly provider: string
  readonly status: "pending" | "resolved"
  readonly resolution: string | null
  readonly prompt: UserInputPrompt
  /** As stored: secret questions only as redaction markers. */
  readonly answers: ReadonlyArray<UserInputAnswerEntry> | null
  readonly reason: string | null
  readonly createdAt: string
  readonly resolvedAt: string | null
}

export interface PromptDetail extends PromptView {
  /** The native request that asked, and where its answer goes. */
  readonly request: { readonly requestId: string; readonly nativeMethod: string; readonly nativeId: string; readonly status: string } | null
  /** The raw native payload of the request that opened the prompt. */
  readonly raw: RuntimeEvent["raw"] | null
  /** Every event about this prompt or its request, in order. */
  readonly timeline: ReadonlyArray<{ readonly seq: number; readonly threadSeq: number; readonly event: RuntimeEvent }>
}

export interface PlanRevision {
  readonly revision: number
  readonly isLatest: boolean
  readonly plan: PlanSnapshot
  readonly eventId: string
  readonly createdAt: string
}

const decodeAnswers = Schema.decodeUnknownSync(Schema.Array(UserInputAnswerEntry))
const decodeSteps = Schema.decodeUnknownSync(Schema.Array(PlanStep))

const toView = (row: typeof prompts.$inferSelect): PromptView => ({
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
  resolvedAt: row.resolvedAt
})

/** What operators (CLI, HTTP) ask of the persisted state. Reads only. */
export class OperatorQueries extends Context.Service<
  OperatorQueries,
  {
    readonly listPrompts: (filter: PromptFilter) => Effect.Effect<ReadonlyArray<PromptView>>
    readonly getPrompt: (promptId: string) => Effect.Effect<PromptDetail, PromptNotFound>
    readonly planHistory: (threadId: string, turnId: string) => Effect.Effect<ReadonlyArray<PlanRevision>>
  }
>()("planbridge/OperatorQueries") {
  static readonly make = Effect.gen(function* () {
    const { db } = yield* Database

    const listPrompts = (filter: PromptFilter) =>
      Effect.sync(() => {
        const conditions: Array<SQL> = []
        if (filter.status !== undefined) conditions.push(eq(prompts.status, filter.status))
        if (filter.provider !== undefined) conditions.push(eq(prompts.provider, filter.provider))
        if (filter.threadId !== undefined) conditions.push(eq(prompts.threadId, filter.threadId))
        if (filter.olderThanMs !== undefined) {
          conditions.push(lte(prompts.createdAt, new Date(Date.now() - filter.olderThanMs).toISOString()))
        }
        return db
          .select()
          .from(prompts)
          .where(and(...conditions))
          .orderBy(desc(prompts.createdAt), asc(prompts.promptId))
          .limit(filter.limit ?? 200)
          .all()
          .map(toView)
      })

    const getPrompt = (promptId: string) =>
      Effect.suspend(() => {
        const row = db.select().from(prompts).where(eq(prompts.promptId, promptId)).get()
        if (row === undefined) return Effect.fail(new PromptNotFound({ promptId, message: `no prompt with id '${promptId}'` }))
        const request = row.requestId === null ? undefined : db.select().from(requests).where(eq(requests.requestId, row.requestId)).get()
        const related = [
          sql`json_extract(${events.event}, '$.payload.promptId') = ${promptId}`,
          sql`json_extract(${events.event}, '$.payload.prompt.promptId') = ${promptId}`
        ]
        if (row.requestId !== null) related.push(sql`json_extract(${events.event}, '$.payload.requestId') = ${row.requestId}`)
        const timeline = db
          .select()
          .from(events)
          .where(and(eq(events.threadId, row.threadId), or(...related)))
          .orderBy(asc(events.seq))
          .all()
          .map((e) => ({ seq: e.seq, threadSeq: e.threadSeq, event: decodePersistedEvent(e) }))
        const opened = timeline.find((t) => t.event.eventId === row.requestedEventId)
        return Effect.succeed<PromptDetail>({
          ...toView(row),
          request:
            request === undefined
              ? null
              : { requestId: request.requestId, nativeMethod: request.nativeMethod, nativeId: request.nativeId, status: request.status },
          raw: opened?.event.raw ?? null,
          timeline
        })
      })

    const planHistory = (threadId: string, turnId: string) =>
      Effect.sync(() =>
        db
          .select()
          .from(planSnapshots)
          .where(and(eq(planSnapshots.threadId, threadId), eq(planSnapshots.turnId, turnId)))
          .orderBy(asc(planSnapshots.revision))
          .all()
          .map((row) => ({
            revision: row.revision,
            isLatest: row.isLatest,
            plan: { explanation: row.explanation, steps: decodeSteps(JSON.parse(row.steps)), source: row.source as PlanSnapshot["source"] },
            eventId: row.eventId,
            createdAt: row.createdAt
          }))
      )

    return OperatorQueries.of({ listPrompts, getPrompt, planHistory })
  })

  static readonly layer = Layer.effect(OperatorQueries, OperatorQueries.make)
}
