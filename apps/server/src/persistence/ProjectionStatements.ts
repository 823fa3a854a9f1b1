import { and, eq, sql } from "drizzle-orm"
import type { Db } from "./Database.ts"
import { prepareNative, type NativeStatement } from "./NativeStatement.ts"
import { items, itemTextChunks, planSnapshots, prompts, proposedPlans, requests, threads, turns } from "./schema.ts"

const p = sql.placeholder

/**
 * The statements the projector writes with, built by drizzle from the typed schema and
 * prepared once on the connection: building SQL per event cost far more than executing it.
 */
export const prepareProjectionStatements = (db: Db) => {
  const threadSet = (set: Parameters<ReturnType<typeof db.update<typeof threads>>["set"]>[0]) =>
    db
      .update(threads)
      .set(set)
      .where(eq(threads.threadId, p("threadId")))

  const queries = {
    threadExists: db
      .select({ threadId: threads.threadId })
      .from(threads)
      .where(eq(threads.threadId, p("threadId"))),
    insertThread: db
      .insert(threads)
      .values({
        threadId: p("threadId"),
        provider: p("provider"),
        state: "starting",
        flags: "[]",
        lastSeq: p("lastSeq"),
        createdAt: p("at"),
        updatedAt: p("at")
      })
      .onConflictDoNothing(),
    /** The batch's last sequence and time, and its last state change (null: the state is as the other statements left it). */
    touchThread: threadSet({
      lastSeq: sql`${p("lastSeq")}`,
      updatedAt: sql`${p("at")}`,
      state: sql`coalesce(${p("state")}, ${threads.state})`,
      flags: sql`coalesce(${p("flags")}, ${threads.flags})`
    }),
    sessionStarted: threadSet({
      cwd: sql`${p("cwd")}`,
      nativeThreadId: sql`${p("nativeThreadId")}`,
      nativeSessionId: sql`${p("nativeSessionId")}`,
      providerVersion: sql`${p("providerVersion")}`,
      state: "starting",
      exit: null
    }),
    sessionConfigured: threadSet({
      capabilities: sql`${p("capabilities")}`,
      mode: sql`${p("mode")}`,
      nativeMode: sql`${p("nativeMode")}`,
      model: sql`${p("model")}`
    }),
    exited: threadSet({ state: "stopped", flags: "[]", exit: sql`${p("exit")}` }),
    modeChanged: threadSet({ mode: sql`${p("mode")}`, nativeMode: sql`${p("nativeMode")}` }),
    capabilitiesChanged: threadSet({ capabilities: sql`${p("capabilities")}` }),
    /**
     * A turn as the batch leaves it. The values are the row the batch's events would create;
     * on an existing row only the mode (when given) and, after a completion, the outcome change.
     */
    turn: db
      .insert(turns)
      .values({
        threadId: p("threadId"),
        turnId: p("turnId"),
        status: p("status"),
        mode: p("mode"),
        error: p("error"),
        usage: p("usage"),
        durationMs: p("durationMs"),
        startedAt: p("startedAt"),
        completedAt: p("completedAt")
      })
      .onConflictDoUpdate({
        target: [turns.threadId, turns.turnId],
        set: {
          mode: sql`coalesce(excluded.mode, ${turns.mode})`,
          status: sql`case when ${p("completed")} then excluded.status else ${turns.status} end`,
          error: sql`case when ${p("completed")} then excluded.error else ${turns.error} end`,
          usage: sql`case when ${p("completed")} then excluded.usage else ${turns.usage} end`,
          durationMs: sql`case when ${p("completed")} then excluded.duration_ms else ${turns.durationMs} end`,
          completedAt: sql`case when ${p("completed")} then excluded.completed_at else ${turns.completedAt} end`
        }
      }),
    /**
     * An item as the batch leaves it. The values are the row the batch's events would create; on
     * an existing row the item fields change only if an item event came (`hasItem`), and the
     * text is replaced when an item event carried the authoritative text; streamed text goes to
     * `itemChunk` instead (the row's text is then left as it is).
     */
    item: db
      .insert(items)
      .values({
        threadId: p("threadId"),
        itemId: p("itemId"),
        turnId: p("turnId"),
        itemType: p("itemType"),
        status: p("status"),
        title: p("title"),
        toolName: p("toolName"),
        data: p("data"),
        text: p("text"),
        startedAt: p("startedAt"),
        updatedAt: p("updatedAt"),
        completedAt: p("completedAt")
      })
      .onConflictDoUpdate({
        target: [items.threadId, items.itemId],
        set: {
          itemType: sql`case when ${p("hasItem")} then excluded.item_type else ${items.itemType} end`,
          status: sql`case when ${p("hasItem")} then excluded.status else ${items.status} end`,
          title: sql`case when ${p("hasItem")} then excluded.title else ${items.title} end`,
          toolName: sql`case when ${p("hasItem")} then excluded.tool_name else ${items.toolName} end`,
          data: sql`case when ${p("hasItem")} then excluded.data else ${items.data} end`,
          text: sql`case when ${p("replaceText")} then excluded.text else ${items.text} end`,
          updatedAt: sql`excluded.updated_at`,
          completedAt: sql`coalesce(excluded.completed_at, ${items.completedAt})`
        }
      }),
    itemChunk: db
      .insert(itemTextChunks)
      .values({ threadId: p("threadId"), itemId: p("itemId"), firstSeq: p("firstSeq"), text: p("text") }),
    itemChunksCleared: db
      .delete(itemTextChunks)
      .where(and(eq(itemTextChunks.threadId, p("threadId")), eq(itemTextChunks.itemId, p("itemId")))),
    lastRevision: db
      .select({ revision: sql<number>`max(${planSnapshots.revision})`.as("revision") })
      .from(planSnapshots)
      .where(and(eq(planSnapshots.threadId, p("threadId")), eq(planSnapshots.turnId, p("turnId")))),
    unmarkLatest: db
      .update(planSnapshots)
      .set({ isLatest: false })
      .where(
        and(
          eq(planSnapshots.threadId, p("threadId")),
          eq(planSnapshots.turnId, p("turnId")),
          eq(planSnapshots.isLatest, true)
        )
      ),
    insertSnapshot: db.insert(planSnapshots).values({
      threadId: p("threadId"),
      turnId: p("turnId"),
      revision: p("revision"),
      explanation: p("explanation"),
      steps: p("steps"),
      source: p("source"),
      isLatest: p("isLatest"),
      eventId: p("eventId"),
      createdAt: p("at")
    }),
    planDelta: db
      .insert(proposedPlans)
      .values({
        planId: p("planId"),
        threadId: p("threadId"),
        turnId: p("turnId"),
        status: "streaming",
        streamedText: p("delta"),
        createdAt: p("createdAt"),
        updatedAt: p("at")
      })
      .onConflictDoUpdate({
        target: proposedPlans.planId,
        set: {
          streamedText: sql`${proposedPlans.streamedText} || excluded.streamed_text`,
          updatedAt: sql`excluded.updated_at`
        }
      }),
    planCompleted: db
      .insert(proposedPlans)
      .values({
        planId: p("planId"),
        threadId: p("threadId"),
        turnId: p("turnId"),
        status: "completed",
        streamedText: "",
        markdown: p("markdown"),
        filePath: p("filePath"),
        title: p("title"),
        createdAt: p("at"),
        updatedAt: p("at")
      })
      .onConflictDoUpdate({
        target: proposedPlans.planId,
        set: {
          status: sql`excluded.status`,
          markdown: sql`excluded.markdown`,
          filePath: sql`excluded.file_path`,
          title: sql`excluded.title`,
          updatedAt: sql`excluded.updated_at`
        }
      }),
    planDecision: db
      .insert(proposedPlans)
      .values({
        planId: p("planId"),
        threadId: p("threadId"),
        turnId: p("turnId"),
        status: p("status"),
        streamedText: "",
        decision: p("decision"),
        feedback: p("feedback"),
        editedMarkdown: p("editedMarkdown"),
        createdAt: p("at"),
        updatedAt: p("at")
      })
      .onConflictDoUpdate({
        target: proposedPlans.planId,
        set: {
          status: sql`excluded.status`,
          decision: sql`excluded.decision`,
          feedback: sql`excluded.feedback`,
          editedMarkdown: sql`excluded.edited_markdown`,
          updatedAt: sql`excluded.updated_at`
        }
      }),
    requestOpened: db
      .insert(requests)
      .values({
        requestId: p("requestId"),
        threadId: p("threadId"),
        turnId: p("turnId"),
        kind: p("kind"),
        title: p("title"),
        detail: p("detail"),
        options: p("options"),
        nativeMethod: p("nativeMethod"),
        nativeId: p("nativeId"),
        promptId: p("promptId"),
        planId: p("planId"),
        status: "pending",
        openedEventId: p("eventId"),
        createdAt: p("at")
      })
      .onConflictDoNothing(),
    // The first resolution wins: a provider may confirm (serverRequest/resolved) what we already resolved.
    requestResolved: db
      .update(requests)
      .set({
        status: "resolved",
        resolution: sql`${p("resolution")}`,
        optionId: sql`${p("optionId")}`,
        resolvedAt: sql`${p("at")}`
      })
      .where(and(eq(requests.requestId, p("requestId")), eq(requests.status, "pending"))),
    promptRequested: db
      .insert(prompts)
      .values({
        promptId: p("promptId"),
        threadId: p("threadId"),
        turnId: p("turnId"),
        provider: p("provider"),
        requestId: p("requestId"),
        prompt: p("prompt"),
        blocking: p("blocking"),
        source: p("source"),
        status: "pending",
        requestedEventId: p("eventId"),
        createdAt: p("at")
      })
      .onConflictDoNothing(),
    promptResolved: db
      .update(prompts)
      .set({
        status: "resolved",
        resolution: sql`${p("resolution")}`,
        answers: sql`${p("answers")}`,
        reason: sql`${p("reason")}`,
        resolvedEventId: sql`${p("eventId")}`,
        resolvedAt: sql`${p("at")}`
      })
      .where(and(eq(prompts.promptId, p("promptId")), eq(prompts.status, "pending")))
  }
  const native = db.$client
  return Object.fromEntries(
    Object.entries(queries).map(([name, query]) => [name, prepareNative(native, query)])
  ) as Record<keyof typeof queries, NativeStatement>
}

/** The projector's statements by name (the PostgreSQL store prepares the same set). */
export type ProjectionStatementName = keyof ReturnType<typeof prepareProjectionStatements>

/**
 * One of the projector's statements as an engine runs it: SQLite runs it on the spot; the
 * PostgreSQL store queues writes for the transaction and answers the two reads (`threadExists`,
 * `lastRevision`) from what it loaded before the batch (postgres/PgProjectionSink.ts).
 */
export interface ProjectionStatement {
  readonly run: (values: Record<string, unknown>) => unknown
  readonly get: <R>(values: Record<string, unknown>) => R | undefined
}
export type ProjectionStatements = Record<ProjectionStatementName, ProjectionStatement>
