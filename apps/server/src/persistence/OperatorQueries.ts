import type {
  PlanSnapshot,
  ResolvedBy,
  RuntimeEvent,
  UserInputAnswerEntry,
  UserInputPrompt
} from "@planbridge/contracts"
import { and, asc, desc, eq, gt, lte, or, type SQL } from "drizzle-orm"
import { Context, Effect, Layer } from "effect"
import { planRevisionOf, promptDetailOf, promptViewOf } from "./OperatorRows.ts"
import { decodePersistedEvent } from "./PersistedEvent.ts"
import { AUDITED_TYPES, auditPageOf, type AuditPage, type AuditQuery } from "./ResolutionAudit.ts"
import { attempt, failsAs, firstRow, StatementPort } from "./StatementPort.ts"
import { PromptNotFound, StoreError } from "./StoreError.ts"

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
  /** Who or what resolved it; null while pending, and for what was resolved before it was recorded. */
  readonly resolvedBy: ResolvedBy | null
}

export interface PromptDetail extends PromptView {
  /** The native request that asked, and where its answer goes. */
  readonly request: {
    readonly requestId: string
    readonly nativeMethod: string
    readonly nativeId: string
    readonly status: string
  } | null
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

/** What operators (CLI, HTTP) ask of the persisted state. Reads only. */
export class OperatorQueries extends Context.Service<
  OperatorQueries,
  {
    readonly listPrompts: (filter: PromptFilter) => Effect.Effect<ReadonlyArray<PromptView>, StoreError>
    readonly getPrompt: (promptId: string) => Effect.Effect<PromptDetail, StoreError>
    readonly planHistory: (threadId: string, turnId: string) => Effect.Effect<ReadonlyArray<PlanRevision>, StoreError>
    /** A page of the trail of resolutions, in log order (ResolutionAudit.ts). */
    readonly resolutions: (query: AuditQuery) => Effect.Effect<AuditPage, StoreError>
  }
>()("planbridge/OperatorQueries") {}

/** Whether an event is about the prompt or its request (its payload names either). */
const isAbout = (event: RuntimeEvent, promptId: string, requestId: string | null): boolean => {
  const payload = event.payload as { promptId?: unknown; requestId?: unknown; prompt?: { promptId?: unknown } }
  return (
    payload.promptId === promptId ||
    payload.prompt?.promptId === promptId ||
    (requestId !== null && payload.requestId === requestId)
  )
}

/**
 * `OperatorQueries` on either engine: the `prompts`, `requests` and `plan_snapshots` projections
 * and the log. The log's text is searched for ids and types as JSON writes them (the dialect's
 * `contains`) and each candidate checked once decoded: PostgreSQL's json operators refuse a row
 * holding a \u0000 escape anywhere, and one query serves both engines.
 */
export const operatorQueries = Layer.effect(
  OperatorQueries,
  Effect.gen(function* () {
    const port = yield* StatementPort
    const { db, tables, dialect } = port
    const { events, planSnapshots, prompts, requests } = tables

    const listPrompts = (filter: PromptFilter) => {
      const conditions: Array<SQL> = []
      if (filter.status !== undefined) conditions.push(eq(prompts.status, filter.status))
      if (filter.provider !== undefined) conditions.push(eq(prompts.provider, filter.provider))
      if (filter.threadId !== undefined) conditions.push(eq(prompts.threadId, filter.threadId))
      if (filter.olderThanMs !== undefined) {
        conditions.push(lte(prompts.createdAt, new Date(Date.now() - filter.olderThanMs).toISOString()))
      }
      return port
        .rows(
          db
            .select()
            .from(prompts)
            .where(and(...conditions))
            .orderBy(desc(prompts.createdAt), asc(prompts.promptId))
            .limit(filter.limit ?? 200)
        )
        .pipe(Effect.flatMap((rows) => attempt((): ReadonlyArray<PromptView> => rows.map(promptViewOf))))
    }

    /** The prompt, its native request, and every event about either; undefined when there is no such prompt. */
    const getPrompt = (promptId: string) =>
      Effect.gen(function* () {
        const row = yield* firstRow(port, db.select().from(prompts).where(eq(prompts.promptId, promptId)))
        if (row === undefined) return undefined
        const request =
          row.requestId === null
            ? undefined
            : yield* firstRow(port, db.select().from(requests).where(eq(requests.requestId, row.requestId)))
        const ids = row.requestId === null ? [promptId] : [promptId, row.requestId]
        const candidates = yield* port.rows(
          db
            .select()
            .from(events)
            .where(
              and(
                eq(events.threadId, row.threadId),
                or(...ids.map((id) => dialect.contains(events.event, JSON.stringify(id))))
              )
            )
            .orderBy(asc(events.seq))
        )
        return yield* attempt((): PromptDetail => {
          const timeline = candidates
            .map((e) => ({ seq: e.seq, threadSeq: e.threadSeq, event: decodePersistedEvent(e) }))
            .filter(({ event }) => isAbout(event, promptId, row.requestId))
          return promptDetailOf(row, request, timeline)
        })
      })

    const planHistory = (threadId: string, turnId: string) =>
      port
        .rows(
          db
            .select()
            .from(planSnapshots)
            .where(and(eq(planSnapshots.threadId, threadId), eq(planSnapshots.turnId, turnId)))
            .orderBy(asc(planSnapshots.revision))
        )
        .pipe(Effect.flatMap((rows) => attempt(() => rows.map(planRevisionOf))))

    /**
     * The audited events after the cursor, `limit` candidates at most (a scan of the log past
     * the cursor): each decoded, `auditPageOf` keeps the audited ones.
     */
    const resolutions = (query: AuditQuery) =>
      port
        .rows(
          db
            .select()
            .from(events)
            .where(
              and(
                gt(events.seq, query.afterSeq),
                or(...AUDITED_TYPES.map((t) => dialect.contains(events.event, `"type":${JSON.stringify(t)}`)))
              )
            )
            .orderBy(asc(events.seq))
            .limit(query.limit)
        )
        .pipe(
          Effect.flatMap((rows) =>
            attempt(() =>
              auditPageOf(
                rows.map((e) => ({ seq: e.seq, event: decodePersistedEvent(e) })),
                query
              )
            )
          )
        )

    return OperatorQueries.of({
      resolutions: (query) => resolutions(query).pipe(failsAs("read", "read the resolutions")),
      listPrompts: (filter) => listPrompts(filter).pipe(failsAs("read", "list prompts")),
      getPrompt: (promptId) =>
        getPrompt(promptId).pipe(
          failsAs("read", `read prompt ${promptId}`),
          Effect.flatMap((detail) =>
            detail === undefined
              ? Effect.fail(
                  new StoreError({
                    reason: new PromptNotFound({ promptId, message: `no prompt with id '${promptId}'` })
                  })
                )
              : Effect.succeed(detail)
          )
        ),
      planHistory: (threadId, turnId) =>
        planHistory(threadId, turnId).pipe(failsAs("read", `read the plan history of turn ${turnId}`))
    })
  })
)
