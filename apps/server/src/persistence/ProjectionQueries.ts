import { and, eq, sql } from "drizzle-orm"
import type { StatementBuilder, StatementTables } from "./StatementBuilder.ts"

const p = sql.placeholder

/**
 * The projector's statements, defined once for both engines: drizzle builds them from the
 * tables given, SQLite's (schema.ts) or PostgreSQL's (postgres/schema.ts, through
 * postgres/PgStatementBuilder.ts), and each engine prepares what its dialect renders. The
 * values are named placeholders; 1/0 flags bind as SQLite integers and as PostgreSQL booleans
 * (PostgreSQL reads '1' and '0' as true and false). Built by each dialect's own builders, not
 * built once and rendered twice: drizzle's builders decide part of the SQL as they build (for an
 * absent value SQLite's write `null` and PostgreSQL's `default`; their conflict targets differ).
 */
export const projectionQueries = (db: StatementBuilder, t: StatementTables) => {
  const threadSet = (set: Parameters<ReturnType<typeof db.update<StatementTables["threads"]>>["set"]>[0]) =>
    db
      .update(t.threads)
      .set(set)
      .where(eq(t.threads.threadId, p("threadId")))

  return {
    threadExists: db
      .select({ threadId: t.threads.threadId })
      .from(t.threads)
      .where(eq(t.threads.threadId, p("threadId"))),
    insertThread: db
      .insert(t.threads)
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
      state: sql`coalesce(${p("state")}, ${t.threads.state})`,
      flags: sql`coalesce(${p("flags")}, ${t.threads.flags})`
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
      .insert(t.turns)
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
        target: [t.turns.threadId, t.turns.turnId],
        set: {
          mode: sql`coalesce(excluded.mode, ${t.turns.mode})`,
          status: sql`case when ${p("completed")} then excluded.status else ${t.turns.status} end`,
          error: sql`case when ${p("completed")} then excluded.error else ${t.turns.error} end`,
          usage: sql`case when ${p("completed")} then excluded.usage else ${t.turns.usage} end`,
          durationMs: sql`case when ${p("completed")} then excluded.duration_ms else ${t.turns.durationMs} end`,
          completedAt: sql`case when ${p("completed")} then excluded.completed_at else ${t.turns.completedAt} end`
        }
      }),
    /**
     * An item as the batch leaves it. The values are the row the batch's events would create; on
     * an existing row the item fields change only if an item event came (`hasItem`), and the
     * text is replaced when an item event carried the authoritative text; streamed text goes to
     * `itemChunk` instead (the row's text is then left as it is).
     */
    item: db
      .insert(t.items)
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
        target: [t.items.threadId, t.items.turnId, t.items.itemId],
        set: {
          itemType: sql`case when ${p("hasItem")} then excluded.item_type else ${t.items.itemType} end`,
          status: sql`case when ${p("hasItem")} then excluded.status else ${t.items.status} end`,
          title: sql`case when ${p("hasItem")} then excluded.title else ${t.items.title} end`,
          toolName: sql`case when ${p("hasItem")} then excluded.tool_name else ${t.items.toolName} end`,
          data: sql`case when ${p("hasItem")} then excluded.data else ${t.items.data} end`,
          text: sql`case when ${p("replaceText")} then excluded.text else ${t.items.text} end`,
          updatedAt: sql`excluded.updated_at`,
          completedAt: sql`coalesce(excluded.completed_at, ${t.items.completedAt})`
        }
      }),
    itemChunk: db.insert(t.itemTextChunks).values({
      threadId: p("threadId"),
      turnId: p("turnId"),
      itemId: p("itemId"),
      firstSeq: p("firstSeq"),
      text: p("text")
    }),
    itemChunksCleared: db
      .delete(t.itemTextChunks)
      .where(
        and(
          eq(t.itemTextChunks.threadId, p("threadId")),
          eq(t.itemTextChunks.turnId, p("turnId")),
          eq(t.itemTextChunks.itemId, p("itemId"))
        )
      ),
    lastRevision: db
      .select({ revision: sql<number>`max(${t.planSnapshots.revision})`.as("revision") })
      .from(t.planSnapshots)
      .where(and(eq(t.planSnapshots.threadId, p("threadId")), eq(t.planSnapshots.turnId, p("turnId")))),
    unmarkLatest: db
      .update(t.planSnapshots)
      .set({ isLatest: false })
      .where(
        and(
          eq(t.planSnapshots.threadId, p("threadId")),
          eq(t.planSnapshots.turnId, p("turnId")),
          eq(t.planSnapshots.isLatest, true)
        )
      ),
    insertSnapshot: db.insert(t.planSnapshots).values({
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
      .insert(t.proposedPlans)
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
        target: t.proposedPlans.planId,
        set: {
          streamedText: sql`${t.proposedPlans.streamedText} || excluded.streamed_text`,
          updatedAt: sql`excluded.updated_at`
        }
      }),
    planCompleted: db
      .insert(t.proposedPlans)
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
        target: t.proposedPlans.planId,
        set: {
          status: sql`excluded.status`,
          markdown: sql`excluded.markdown`,
          filePath: sql`excluded.file_path`,
          title: sql`excluded.title`,
          updatedAt: sql`excluded.updated_at`
        }
      }),
    planDecision: db
      .insert(t.proposedPlans)
      .values({
        planId: p("planId"),
        threadId: p("threadId"),
        turnId: p("turnId"),
        status: p("status"),
        streamedText: "",
        decision: p("decision"),
        feedback: p("feedback"),
        editedMarkdown: p("editedMarkdown"),
        resolvedBy: p("resolvedBy"),
        createdAt: p("at"),
        updatedAt: p("at")
      })
      .onConflictDoUpdate({
        target: t.proposedPlans.planId,
        set: {
          status: sql`excluded.status`,
          decision: sql`excluded.decision`,
          feedback: sql`excluded.feedback`,
          editedMarkdown: sql`excluded.edited_markdown`,
          resolvedBy: sql`excluded.resolved_by`,
          updatedAt: sql`excluded.updated_at`
        }
      }),
    requestOpened: db
      .insert(t.requests)
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
      .update(t.requests)
      .set({
        status: "resolved",
        resolution: sql`${p("resolution")}`,
        optionId: sql`${p("optionId")}`,
        resolvedBy: sql`${p("resolvedBy")}`,
        resolvedAt: sql`${p("at")}`
      })
      .where(and(eq(t.requests.requestId, p("requestId")), eq(t.requests.status, "pending"))),
    promptRequested: db
      .insert(t.prompts)
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
      .update(t.prompts)
      .set({
        status: "resolved",
        resolution: sql`${p("resolution")}`,
        answers: sql`${p("answers")}`,
        reason: sql`${p("reason")}`,
        resolvedBy: sql`${p("resolvedBy")}`,
        resolvedEventId: sql`${p("eventId")}`,
        resolvedAt: sql`${p("at")}`
      })
      .where(and(eq(t.prompts.promptId, p("promptId")), eq(t.prompts.status, "pending")))
  }
}
