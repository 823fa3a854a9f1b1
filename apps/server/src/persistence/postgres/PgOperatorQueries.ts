import type { RuntimeEvent } from "@planbridge/contracts"
import { and, asc, desc, eq, gt, lte, or, sql, type SQL } from "drizzle-orm"
import { Effect, Layer } from "effect"
import {
  OperatorQueries,
  PromptNotFound,
  type PromptDetail,
  type PromptFilter,
  type PromptView
} from "../OperatorQueries.ts"
import { planRevisionOf, promptDetailOf, promptViewOf } from "../OperatorRows.ts"
import { decodePersistedEvent } from "../PersistedEvent.ts"
import { AUDITED_TYPES, auditPageOf, type AuditQuery } from "../ResolutionAudit.ts"
import { storeFailure } from "../StoreError.ts"
import { PgDatabase } from "./PgDatabase.ts"
import { events, planSnapshots, prompts, requests } from "./schema.ts"

/** Whether an event is about the prompt or its request (SqliteOperatorQueries.ts's `json_extract` conditions). */
const isAbout = (event: RuntimeEvent, promptId: string, requestId: string | null): boolean => {
  const payload = event.payload as { promptId?: unknown; requestId?: unknown; prompt?: { promptId?: unknown } }
  return (
    payload.promptId === promptId ||
    payload.prompt?.promptId === promptId ||
    (requestId !== null && payload.requestId === requestId)
  )
}

/** `OperatorQueries` on PostgreSQL: as on SQLite (SqliteOperatorQueries.ts), `->>` for `json_extract`. */
export const pgOperatorQueries = Layer.effect(
  OperatorQueries,
  Effect.gen(function* () {
    const { db } = yield* PgDatabase

    const listPrompts = async (filter: PromptFilter): Promise<ReadonlyArray<PromptView>> => {
      const conditions: Array<SQL> = []
      if (filter.status !== undefined) conditions.push(eq(prompts.status, filter.status))
      if (filter.provider !== undefined) conditions.push(eq(prompts.provider, filter.provider))
      if (filter.threadId !== undefined) conditions.push(eq(prompts.threadId, filter.threadId))
      if (filter.olderThanMs !== undefined) {
        conditions.push(lte(prompts.createdAt, new Date(Date.now() - filter.olderThanMs).toISOString()))
      }
      const rows = await db
        .select()
        .from(prompts)
        .where(and(...conditions))
        .orderBy(desc(prompts.createdAt), asc(prompts.promptId))
        .limit(filter.limit ?? 200)
      return rows.map(promptViewOf)
    }

    /** The prompt, its native request, and every event about either; undefined when there is no such prompt. */
    const getPrompt = async (promptId: string): Promise<PromptDetail | undefined> => {
      const [row] = await db.select().from(prompts).where(eq(prompts.promptId, promptId))
      if (row === undefined) return undefined
      const request =
        row.requestId === null
          ? undefined
          : (await db.select().from(requests).where(eq(requests.requestId, row.requestId)))[0]
      // The log's text is searched for the ids as JSON writes them, and each candidate is checked
      // once decoded: PostgreSQL's json operators refuse a row holding a \u0000 escape anywhere.
      const ids = row.requestId === null ? [promptId] : [promptId, row.requestId]
      const candidates = await db
        .select()
        .from(events)
        .where(
          and(
            eq(events.threadId, row.threadId),
            or(...ids.map((id) => sql`strpos(${events.event}, ${JSON.stringify(id)}) > 0`))
          )
        )
        .orderBy(asc(events.seq))
      const timeline = candidates
        .map((e) => ({ seq: e.seq, threadSeq: e.threadSeq, event: decodePersistedEvent(e) }))
        .filter(({ event }) => isAbout(event, promptId, row.requestId))
      return promptDetailOf(row, request, timeline)
    }

    const planHistory = async (threadId: string, turnId: string) =>
      (
        await db
          .select()
          .from(planSnapshots)
          .where(and(eq(planSnapshots.threadId, threadId), eq(planSnapshots.turnId, turnId)))
          .orderBy(asc(planSnapshots.revision))
      ).map(planRevisionOf)

    /**
     * The audited events after the cursor: the log's text searched for their types as JSON writes
     * them (getPrompt's reason), each candidate decoded; `auditPageOf` keeps the audited ones.
     */
    const resolutions = async (query: AuditQuery) => {
      const rows = await db
        .select()
        .from(events)
        .where(
          and(
            gt(events.seq, query.afterSeq),
            or(...AUDITED_TYPES.map((t) => sql`strpos(${events.event}, ${`"type":${JSON.stringify(t)}`}) > 0`))
          )
        )
        .orderBy(asc(events.seq))
        .limit(query.limit)
      return auditPageOf(
        rows.map((e) => ({ seq: e.seq, event: decodePersistedEvent(e) })),
        query
      )
    }

    return OperatorQueries.of({
      resolutions: (query) =>
        Effect.tryPromise({ try: () => resolutions(query), catch: storeFailure("read", "read the resolutions") }),
      listPrompts: (filter) =>
        Effect.tryPromise({ try: () => listPrompts(filter), catch: storeFailure("read", "list prompts") }),
      getPrompt: (promptId) =>
        Effect.tryPromise({
          try: () => getPrompt(promptId),
          catch: storeFailure("read", `read prompt ${promptId}`)
        }).pipe(
          Effect.flatMap((detail) =>
            detail === undefined
              ? Effect.fail(new PromptNotFound({ promptId, message: `no prompt with id '${promptId}'` }))
              : Effect.succeed(detail)
          )
        ),
      planHistory: (threadId, turnId) =>
        Effect.tryPromise({
          try: () => planHistory(threadId, turnId),
          catch: storeFailure("read", `read the plan history of turn ${turnId}`)
        })
    })
  })
)
