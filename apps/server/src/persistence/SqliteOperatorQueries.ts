import { and, asc, desc, eq, gt, lte, or, sql, type SQL } from "drizzle-orm"
import { Effect, Layer } from "effect"
import { Database } from "./Database.ts"
import {
  OperatorQueries,
  PromptNotFound,
  type PromptDetail,
  type PromptFilter,
  type PromptView
} from "./OperatorQueries.ts"
import { planRevisionOf, promptDetailOf, promptViewOf } from "./OperatorRows.ts"
import { decodePersistedEvent } from "./PersistedEvent.ts"
import { AUDITED_TYPES, auditPageOf, type AuditQuery } from "./ResolutionAudit.ts"
import { storeFailure } from "./StoreError.ts"
import { events, planSnapshots, prompts, requests } from "./schema.ts"

/** `OperatorQueries` on SQLite: the `prompts`, `requests` and `plan_snapshots` projections and the log. */
export const sqliteOperatorQueries = Layer.effect(
  OperatorQueries,
  Effect.gen(function* () {
    const { db } = yield* Database

    const listPrompts = (filter: PromptFilter): ReadonlyArray<PromptView> => {
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
        .map(promptViewOf)
    }

    /** The prompt, its native request, and every event about either; undefined when there is no such prompt. */
    const getPrompt = (promptId: string): PromptDetail | undefined => {
      const row = db.select().from(prompts).where(eq(prompts.promptId, promptId)).get()
      if (row === undefined) return undefined
      const request =
        row.requestId === null
          ? undefined
          : db.select().from(requests).where(eq(requests.requestId, row.requestId)).get()
      const related = [
        sql`json_extract(${events.event}, '$.payload.promptId') = ${promptId}`,
        sql`json_extract(${events.event}, '$.payload.prompt.promptId') = ${promptId}`
      ]
      if (row.requestId !== null) {
        related.push(sql`json_extract(${events.event}, '$.payload.requestId') = ${row.requestId}`)
      }
      const timeline = db
        .select()
        .from(events)
        .where(and(eq(events.threadId, row.threadId), or(...related)))
        .orderBy(asc(events.seq))
        .all()
        .map((e) => ({ seq: e.seq, threadSeq: e.threadSeq, event: decodePersistedEvent(e) }))
      return promptDetailOf(row, request, timeline)
    }

    const planHistory = (threadId: string, turnId: string) =>
      db
        .select()
        .from(planSnapshots)
        .where(and(eq(planSnapshots.threadId, threadId), eq(planSnapshots.turnId, turnId)))
        .orderBy(asc(planSnapshots.revision))
        .all()
        .map(planRevisionOf)

    /** The audited events after the cursor, `limit` of them at most (a scan of the log past the cursor). */
    const resolutions = (query: AuditQuery) => {
      const type = sql`json_extract(${events.event}, '$.type')`
      const rows = db
        .select()
        .from(events)
        .where(
          and(
            gt(events.seq, query.afterSeq),
            sql`${type} in (${sql.join(
              AUDITED_TYPES.map((t) => sql`${t}`),
              sql`, `
            )})`
          )
        )
        .orderBy(asc(events.seq))
        .limit(query.limit)
        .all()
        .map((e) => ({ seq: e.seq, event: decodePersistedEvent(e) }))
      return auditPageOf(rows, query)
    }

    return OperatorQueries.of({
      resolutions: (query) =>
        Effect.try({ try: () => resolutions(query), catch: storeFailure("read", "read the resolutions") }),
      listPrompts: (filter) =>
        Effect.try({ try: () => listPrompts(filter), catch: storeFailure("read", "list prompts") }),
      getPrompt: (promptId) =>
        Effect.try({ try: () => getPrompt(promptId), catch: storeFailure("read", `read prompt ${promptId}`) }).pipe(
          Effect.flatMap((detail) =>
            detail === undefined
              ? Effect.fail(new PromptNotFound({ promptId, message: `no prompt with id '${promptId}'` }))
              : Effect.succeed(detail)
          )
        ),
      planHistory: (threadId, turnId) =>
        Effect.try({
          try: () => planHistory(threadId, turnId),
          catch: storeFailure("read", `read the plan history of turn ${turnId}`)
        })
    })
  })
)
