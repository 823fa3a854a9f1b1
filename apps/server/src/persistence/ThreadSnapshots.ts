import {
  OperatingMode,
  PlanSnapshot,
  PlanStep,
  ProviderCapabilities,
  PromptResolutionKind,
  TokenUsage,
  UserInputAnswerEntry,
  type ThreadSnapshot,
  type ThreadSummary
} from "@planbridge/contracts"
import { asc, desc, eq, getTableColumns, max } from "drizzle-orm"
import { Schema } from "effect"
import type { Db } from "./Database.ts"
import { itemText } from "./ItemText.ts"
import { decodePromptJson } from "./StoredPrompt.ts"
import { events, items, planSnapshots, prompts, proposedPlans, requests, threads, turns } from "./schema.ts"

const parse = <S extends Schema.Codec<unknown, unknown>>(schema: S) => {
  const decode = Schema.decodeUnknownSync(schema)
  return (json: string | null): S["Type"] | null => (json === null ? null : decode(JSON.parse(json)))
}
const parseCapabilities = parse(ProviderCapabilities)
const parseUsage = parse(TokenUsage)
const parseAnswers = parse(Schema.Array(UserInputAnswerEntry))
const parseSteps = parse(Schema.Array(PlanStep))
const parseFlags = parse(Schema.Array(Schema.String))
const parseError = parse(Schema.Struct({ message: Schema.String, code: Schema.optionalKey(Schema.String) }))
const decodeMode = Schema.decodeUnknownSync(Schema.NullOr(OperatingMode))
const decodeResolution = Schema.decodeUnknownSync(Schema.NullOr(PromptResolutionKind))
const decodeSource = Schema.decodeUnknownSync(PlanSnapshot.fields.source)

type Brand<T> = T & never
const id = <T>(value: string): T => value as Brand<T>

/**
 * The thread as its projections hold it, in the shape clients render. Read synchronously
 * from the one connection, so it is consistent with `seq`: events after `seq` apply on top.
 */
export const readThreadSnapshot = (db: Db, threadId: string): ThreadSnapshot | undefined => {
  const thread = db.select().from(threads).where(eq(threads.threadId, threadId)).get()
  if (thread === undefined) return undefined
  const latest = db
    .select({
      turnId: planSnapshots.turnId,
      revision: planSnapshots.revision,
      explanation: planSnapshots.explanation,
      steps: planSnapshots.steps,
      source: planSnapshots.source
    })
    .from(planSnapshots)
    .innerJoin(events, eq(events.eventId, planSnapshots.eventId))
    .where(eq(planSnapshots.threadId, threadId))
    .orderBy(desc(events.seq))
    .limit(1)
    .get()
  const revisions = db
    .select({ turnId: planSnapshots.turnId, revision: max(planSnapshots.revision) })
    .from(planSnapshots)
    .where(eq(planSnapshots.threadId, threadId))
    .groupBy(planSnapshots.turnId)
    .orderBy(asc(planSnapshots.turnId))
    .all()
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
    turns: db
      .select()
      .from(turns)
      .where(eq(turns.threadId, threadId))
      .orderBy(asc(turns.startedAt), asc(turns.turnId))
      .all()
      .map((t) => ({
        turnId: id(t.turnId),
        status: t.status as ThreadSnapshot["turns"][number]["status"],
        mode: decodeMode(t.mode),
        error: parseError(t.error),
        usage: parseUsage(t.usage),
        startedAt: t.startedAt,
        completedAt: t.completedAt
      })),
    items: db
      .select({ ...getTableColumns(items), text: itemText })
      .from(items)
      .where(eq(items.threadId, threadId))
      .orderBy(asc(items.startedAt), asc(items.itemId))
      .all()
      .map((i) => ({
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
    proposedPlans: db
      .select()
      .from(proposedPlans)
      .where(eq(proposedPlans.threadId, threadId))
      .orderBy(asc(proposedPlans.createdAt), asc(proposedPlans.planId))
      .all()
      .map((p) => ({
        planId: id(p.planId),
        turnId: id(p.turnId),
        status: p.status,
        streamedText: p.streamedText,
        markdown: p.markdown,
        filePath: p.filePath,
        decision: p.decision,
        feedback: p.feedback,
        editedMarkdown: p.editedMarkdown,
        createdAt: p.createdAt
      })),
    prompts: db
      .select()
      .from(prompts)
      .where(eq(prompts.threadId, threadId))
      .orderBy(asc(prompts.createdAt), asc(prompts.promptId))
      .all()
      .map((p) => ({
        promptId: id(p.promptId),
        turnId: p.turnId === null ? null : id(p.turnId),
        requestId: p.requestId === null ? null : id(p.requestId),
        prompt: decodePromptJson(p.prompt),
        status: p.status === "pending" ? ("pending" as const) : ("resolved" as const),
        resolution: decodeResolution(p.resolution),
        answers: parseAnswers(p.answers),
        reason: p.reason,
        createdAt: p.createdAt,
        resolvedAt: p.resolvedAt
      })),
    requests: db
      .select()
      .from(requests)
      .where(eq(requests.threadId, threadId))
      .orderBy(asc(requests.createdAt), asc(requests.requestId))
      .all()
      .map((r) => ({
        requestId: id(r.requestId),
        turnId: r.turnId === null ? null : id(r.turnId),
        kind: r.kind,
        title: r.title,
        status: r.status === "pending" ? ("pending" as const) : ("resolved" as const),
        resolution: r.resolution,
        optionId: r.optionId,
        promptId: r.promptId === null ? null : id(r.promptId),
        planId: r.planId === null ? null : id(r.planId),
        createdAt: r.createdAt
      }))
  }
}

/** Every thread, newest activity first. `live` is supplied by the caller (the session manager knows). */
export const listThreads = (db: Db, isLive: (threadId: string) => boolean): ReadonlyArray<ThreadSummary> =>
  db
    .select()
    .from(threads)
    .orderBy(desc(threads.updatedAt), asc(threads.threadId))
    .all()
    .map((t) => ({
      threadId: id(t.threadId),
      provider: t.provider,
      state: t.state,
      mode: decodeMode(t.mode),
      seq: t.lastSeq,
      live: isLive(t.threadId),
      updatedAt: t.updatedAt
    }))
