import {
  OperatingMode,
  PlanSnapshot,
  PlanStep,
  ProviderCapabilities,
  PromptResolutionKind,
  RequestOption,
  ResolvedBy,
  TokenUsage,
  UserInputAnswerEntry,
  type ThreadSnapshot
} from "@planbridge/contracts"
import { desc, eq, sql, type Table } from "drizzle-orm"
import { Schema } from "effect"
import type { Db } from "./Database.ts"
import { itemText } from "./ItemText.ts"
import { prepareNative } from "./NativeStatement.ts"
import { catchUpProjections } from "./ProjectionLag.ts"
import { decodePromptJson } from "./StoredPrompt.ts"
import * as schema from "./schema.ts"
import { items, planSnapshots, prompts, proposedPlans, requests, threads, turns } from "./schema.ts"
import { named, snapshotQueries } from "./SnapshotQueries.ts"

const parse = <S extends Schema.Codec<unknown, unknown>>(schema: S) => {
  const decode = Schema.decodeUnknownSync(schema)
  return (json: string | null): S["Type"] | null => (json === null ? null : decode(JSON.parse(json)))
}
const parseCapabilities = parse(ProviderCapabilities)
const parseUsage = parse(TokenUsage)
const parseAnswers = parse(Schema.Array(UserInputAnswerEntry))
const parseSteps = parse(Schema.Array(PlanStep))
const parseOptions = parse(Schema.Array(RequestOption))
const parseFlags = parse(Schema.Array(Schema.String))
const parseResolvedBy = parse(ResolvedBy)
const parseError = parse(Schema.Struct({ message: Schema.String, code: Schema.optionalKey(Schema.String) }))
const decodeMode = Schema.decodeUnknownSync(Schema.NullOr(OperatingMode))
const decodeResolution = Schema.decodeUnknownSync(Schema.NullOr(PromptResolutionKind))
const decodeSource = Schema.decodeUnknownSync(PlanSnapshot.fields.source)

type Brand<T> = T & never
const id = <T>(value: string): T => value as Brand<T>

/**
 * The snapshot's statements on SQLite, prepared once per connection: drizzle writes them from the
 * typed schema, better-sqlite3 runs them (NativeStatement.ts). Built per call through drizzle, their
 * query building and row mapping were a third of a 100k-event thread's snapshot (issue 17).
 */
const statementsOf = (db: Db) => {
  const native = (query: Parameters<typeof prepareNative>[1]) => prepareNative(db.$client, query)
  const shared = snapshotQueries(db, schema, itemText)
  return {
    thread: native(shared.thread),
    latestPlan: native(
      db
        .select({
          turnId: named(planSnapshots.turnId, "turnId"),
          revision: planSnapshots.revision,
          explanation: planSnapshots.explanation,
          steps: planSnapshots.steps,
          source: planSnapshots.source
        })
        .from(planSnapshots)
        .where(eq(planSnapshots.threadId, sql.placeholder("threadId")))
        // The revision projected last, found at the end of `plan_snapshots_thread` (thread, rowid):
        // ordered by its event's `seq` instead, it cost a join per revision of the thread (issue 17).
        // The projector writes a batch's revisions in the log's order (by each turn's last one), so
        // the two are the same revision.
        .orderBy(desc(sql`${planSnapshots}.rowid`))
        .limit(1)
    ),
    revisions: native(shared.revisions),
    turns: native(shared.turns),
    items: native(shared.items),
    proposedPlans: native(shared.proposedPlans),
    prompts: native(shared.prompts),
    requests: native(shared.requests)
  }
}
const statementsByDb = new WeakMap<Db, ReturnType<typeof statementsOf>>()
const statementsFor = (db: Db) => statementsByDb.get(db) ?? statementsByDb.set(db, statementsOf(db)).get(db)!

type Row<T extends Table> = T["$inferSelect"]

interface LatestPlanRow {
  readonly turnId: string
  readonly revision: number
  readonly explanation: string | null
  readonly steps: string
  readonly source: string
}

/** The rows a snapshot is made of, whatever the engine read them from (column names as in the schema). */
export interface SnapshotRows {
  readonly thread: Row<typeof threads>
  readonly latestPlan: LatestPlanRow | undefined
  readonly revisions: ReadonlyArray<{ readonly turnId: string; readonly revision: number | null }>
  readonly turns: ReadonlyArray<Row<typeof turns>>
  readonly items: ReadonlyArray<Row<typeof items> & { text: string }>
  readonly proposedPlans: ReadonlyArray<Row<typeof proposedPlans>>
  readonly prompts: ReadonlyArray<Row<typeof prompts>>
  readonly requests: ReadonlyArray<Row<typeof requests>>
}

/**
 * The whole thread as its projections hold it, in the shape clients render (the operator API's
 * view; clients get a window, ThreadSnapshotJson.ts). Read synchronously
 * from the one connection, so it is consistent with `seq`: events after `seq` apply on top.
 */
export const readThreadSnapshot = (db: Db, threadId: string): ThreadSnapshot | undefined => {
  catchUpProjections(db)
  const statements = statementsFor(db)
  const by = { threadId }
  const thread = statements.thread.get<Row<typeof threads>>(by)
  if (thread === undefined) return undefined
  return snapshotFromRows({
    thread,
    latestPlan: statements.latestPlan.get<LatestPlanRow>(by),
    revisions: statements.revisions.all<{ turnId: string; revision: number | null }>(by),
    turns: statements.turns.all<Row<typeof turns>>(by),
    items: statements.items.all<Row<typeof items> & { text: string }>(by),
    proposedPlans: statements.proposedPlans.all<Row<typeof proposedPlans>>(by),
    prompts: statements.prompts.all<Row<typeof prompts>>(by),
    requests: statements.requests.all<Row<typeof requests>>(by)
  })
}

/** The thread's row and its latest checklist: the head of a snapshot window (ThreadSnapshotJson.ts). */
export const readSnapshotHeadRows = (
  db: Db,
  threadId: string
): Pick<SnapshotRows, "thread" | "latestPlan"> | undefined => {
  const statements = statementsFor(db)
  const by = { threadId }
  const thread = statements.thread.get<Row<typeof threads>>(by)
  if (thread === undefined) return undefined
  return { thread, latestPlan: statements.latestPlan.get<LatestPlanRow>(by) }
}

/** A whole snapshot (`olderTurns` null) from its rows: decodes every JSON column with its Schema. */
export const snapshotFromRows = (rows: SnapshotRows): ThreadSnapshot => {
  const { thread, latestPlan: latest, revisions } = rows
  return {
    threadId: id(thread.threadId),
    provider: thread.provider,
    seq: thread.lastSeq,
    state: thread.state,
    flags: parseFlags(thread.flags) ?? [],
    mode: decodeMode(thread.mode),
    nativeMode: thread.nativeMode,
    model: thread.model,
    capabilities: parseCapabilities(thread.capabilities),
    turns: rows.turns.map((t) => ({
      turnId: id(t.turnId),
      status: t.status as ThreadSnapshot["turns"][number]["status"],
      mode: decodeMode(t.mode),
      error: parseError(t.error),
      usage: parseUsage(t.usage),
      startedAt: t.startedAt,
      completedAt: t.completedAt
    })),
    items: rows.items.map((i) => ({
      itemId: i.itemId,
      turnId: id(i.turnId),
      itemType: i.itemType,
      status: i.status,
      title: i.title,
      toolName: i.toolName,
      text: i.text,
      startedAt: i.startedAt,
      completedAt: i.completedAt
    })),
    latestPlan:
      latest === undefined
        ? null
        : {
            turnId: id(latest.turnId),
            revision: latest.revision,
            plan: {
              explanation: latest.explanation,
              steps: parseSteps(latest.steps) ?? [],
              source: decodeSource(latest.source)
            }
          },
    planRevisions: Object.fromEntries(revisions.map((r) => [r.turnId, r.revision ?? 0])),
    proposedPlans: rows.proposedPlans.map((p) => ({
      planId: id(p.planId),
      turnId: id(p.turnId),
      status: p.status,
      streamedText: p.streamedText,
      markdown: p.markdown,
      filePath: p.filePath,
      decision: p.decision,
      feedback: p.feedback,
      editedMarkdown: p.editedMarkdown,
      createdAt: p.createdAt,
      resolvedBy: parseResolvedBy(p.resolvedBy)
    })),
    prompts: rows.prompts.map((p) => ({
      promptId: id(p.promptId),
      turnId: p.turnId === null ? null : id(p.turnId),
      requestId: p.requestId === null ? null : id(p.requestId),
      prompt: decodePromptJson(p.prompt),
      status: p.status === "pending" ? ("pending" as const) : ("resolved" as const),
      resolution: decodeResolution(p.resolution),
      answers: parseAnswers(p.answers),
      reason: p.reason,
      createdAt: p.createdAt,
      resolvedAt: p.resolvedAt,
      resolvedBy: parseResolvedBy(p.resolvedBy)
    })),
    requests: rows.requests.map((r) => ({
      requestId: id(r.requestId),
      turnId: r.turnId === null ? null : id(r.turnId),
      kind: r.kind,
      title: r.title,
      detail: r.detail,
      options: parseOptions(r.options) ?? [],
      status: r.status === "pending" ? ("pending" as const) : ("resolved" as const),
      resolution: r.resolution,
      optionId: r.optionId,
      promptId: r.promptId === null ? null : id(r.promptId),
      planId: r.planId === null ? null : id(r.planId),
      createdAt: r.createdAt,
      resolvedBy: parseResolvedBy(r.resolvedBy)
    })),
    olderTurns: null
  }
}
