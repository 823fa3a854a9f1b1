import type { RuntimeEvent, RuntimeEventOf, StreamKind } from "@planbridge/contracts"
import { and, eq, sql } from "drizzle-orm"
import type { Db } from "./Database.ts"
import { prepareNative, type NativeStatement } from "./NativeStatement.ts"
import { items, planSnapshots, prompts, proposedPlans, requests, threads, turns } from "./schema.ts"

const p = sql.placeholder
const json = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value))

/**
 * Applies canonical events to the projection tables. It runs inside the transaction that
 * appends the events, reads nothing but the database and the events (no clock, no
 * randomness), and so replaying the log through it rebuilds exactly the same projections.
 * Statements are prepared once: building SQL per event cost far more than executing it.
 */
export const makeProjector = (db: Db) => {
  const threadSet = (set: Parameters<ReturnType<typeof db.update<typeof threads>>["set"]>[0]) =>
    db.update(threads).set(set).where(eq(threads.threadId, p("threadId")))

  const queries = {
    threadExists: db.select({ threadId: threads.threadId }).from(threads).where(eq(threads.threadId, p("threadId"))),
    insertThread: db
      .insert(threads)
      .values({ threadId: p("threadId"), provider: p("provider"), state: "starting", flags: "[]", lastSeq: p("lastSeq"), createdAt: p("at"), updatedAt: p("at") })
      .onConflictDoNothing(),
    touchThread: threadSet({ lastSeq: sql`${p("lastSeq")}`, updatedAt: sql`${p("at")}` }),
    sessionStarted: threadSet({
      cwd: sql`${p("cwd")}`,
      nativeThreadId: sql`${p("nativeThreadId")}`,
      nativeSessionId: sql`${p("nativeSessionId")}`,
      providerVersion: sql`${p("providerVersion")}`,
      state: "starting",
      exit: null
    }),
    sessionConfigured: threadSet({ capabilities: sql`${p("capabilities")}`, mode: sql`${p("mode")}`, nativeMode: sql`${p("nativeMode")}`, model: sql`${p("model")}` }),
    stateChanged: threadSet({ state: sql`${p("state")}`, flags: sql`${p("flags")}` }),
    exited: threadSet({ state: "stopped", flags: "[]", exit: sql`${p("exit")}` }),
    modeChanged: threadSet({ mode: sql`${p("mode")}`, nativeMode: sql`${p("nativeMode")}` }),
    capabilitiesChanged: threadSet({ capabilities: sql`${p("capabilities")}` }),
    turnStarted: db
      .insert(turns)
      .values({ threadId: p("threadId"), turnId: p("turnId"), status: "inProgress", mode: p("mode"), startedAt: p("at") })
      .onConflictDoUpdate({ target: [turns.threadId, turns.turnId], set: { mode: sql`coalesce(${p("mode")}, ${turns.mode})` } }),
    // Merge status and times only: the completion carries no items and must not replace them.
    turnCompleted: db
      .insert(turns)
      .values({ threadId: p("threadId"), turnId: p("turnId"), status: p("status"), error: p("error"), usage: p("usage"), durationMs: p("durationMs"), startedAt: p("at"), completedAt: p("at") })
      .onConflictDoUpdate({
        target: [turns.threadId, turns.turnId],
        set: { status: sql`excluded.status`, error: sql`excluded.error`, usage: sql`excluded.usage`, durationMs: sql`excluded.duration_ms`, completedAt: sql`excluded.completed_at` }
      }),
    // A text on the event replaces the streamed buffer: on completion it is the authoritative text.
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
        text: sql`coalesce(${p("text")}, '')`,
        startedAt: p("at"),
        updatedAt: p("at"),
        completedAt: p("completedAt")
      })
      .onConflictDoUpdate({
        target: [items.threadId, items.itemId],
        set: {
          itemType: sql`excluded.item_type`,
          status: sql`excluded.status`,
          title: sql`excluded.title`,
          toolName: sql`excluded.tool_name`,
          data: sql`excluded.data`,
          text: sql`coalesce(${p("text")}, ${items.text})`,
          updatedAt: sql`excluded.updated_at`,
          completedAt: sql`coalesce(excluded.completed_at, ${items.completedAt})`
        }
      }),
    // A delta may arrive for an item never announced; the item is created rather than the text lost.
    delta: db
      .insert(items)
      .values({ threadId: p("threadId"), itemId: p("itemId"), turnId: p("turnId"), itemType: p("itemType"), status: "inProgress", text: p("delta"), startedAt: p("startedAt"), updatedAt: p("at") })
      .onConflictDoUpdate({ target: [items.threadId, items.itemId], set: { text: sql`${items.text} || excluded.text`, updatedAt: sql`excluded.updated_at` } }),
    lastRevision: db
      .select({ revision: sql<number>`max(${planSnapshots.revision})`.as("revision") })
      .from(planSnapshots)
      .where(and(eq(planSnapshots.threadId, p("threadId")), eq(planSnapshots.turnId, p("turnId")))),
    unmarkLatest: db
      .update(planSnapshots)
      .set({ isLatest: false })
      .where(and(eq(planSnapshots.threadId, p("threadId")), eq(planSnapshots.turnId, p("turnId")), eq(planSnapshots.isLatest, true))),
    insertSnapshot: db
      .insert(planSnapshots)
      .values({
        threadId: p("threadId"),
        turnId: p("turnId"),
        revision: p("revision"),
        explanation: p("explanation"),
        steps: p("steps"),
        source: p("source"),
        isLatest: true,
        eventId: p("eventId"),
        createdAt: p("at")
      }),
    planDelta: db
      .insert(proposedPlans)
      .values({ planId: p("planId"), threadId: p("threadId"), turnId: p("turnId"), status: "streaming", streamedText: p("delta"), createdAt: p("at"), updatedAt: p("at") })
      .onConflictDoUpdate({ target: proposedPlans.planId, set: { streamedText: sql`${proposedPlans.streamedText} || excluded.streamed_text`, updatedAt: sql`excluded.updated_at` } }),
    planCompleted: db
      .insert(proposedPlans)
      .values({ planId: p("planId"), threadId: p("threadId"), turnId: p("turnId"), status: "completed", streamedText: "", markdown: p("markdown"), filePath: p("filePath"), title: p("title"), createdAt: p("at"), updatedAt: p("at") })
      .onConflictDoUpdate({
        target: proposedPlans.planId,
        set: { status: sql`excluded.status`, markdown: sql`excluded.markdown`, filePath: sql`excluded.file_path`, title: sql`excluded.title`, updatedAt: sql`excluded.updated_at` }
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
        set: { status: sql`excluded.status`, decision: sql`excluded.decision`, feedback: sql`excluded.feedback`, editedMarkdown: sql`excluded.edited_markdown`, updatedAt: sql`excluded.updated_at` }
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
      .set({ status: "resolved", resolution: sql`${p("resolution")}`, optionId: sql`${p("optionId")}`, resolvedAt: sql`${p("at")}` })
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
  const s = Object.fromEntries(Object.entries(queries).map(([name, query]) => [name, prepareNative(native, query)])) as Record<
    keyof typeof queries,
    NativeStatement
  >

  /**
   * Streamed text waiting to be appended, per item. Deltas dominate the traffic; appending
   * them item by item once per batch (or before anything else touches the item) writes the
   * same text as one statement per delta, at a fraction of the cost.
   */
  const pendingText = new Map<string, { threadId: string; itemId: string; turnId: string; itemType: string; text: string; startedAt: string; at: string }>()
  const flushText = (key: string): void => {
    const pending = pendingText.get(key)
    if (pending === undefined) return
    pendingText.delete(key)
    s.delta.run({ threadId: pending.threadId, itemId: pending.itemId, turnId: pending.turnId, itemType: pending.itemType, delta: pending.text, startedAt: pending.startedAt, at: pending.at })
  }

  /** Threads whose row is known to exist, and their last sequence within the current batch. */
  const knownThreads = new Set<string>()
  const touched = new Map<string, { lastSeq: number; at: string }>()

  const project = (event: RuntimeEvent, threadSeq: number): void => {
    const threadId = event.threadId
    const at = event.createdAt
    if (!knownThreads.has(threadId)) {
      if (s.threadExists.get<{ thread_id: string }>({ threadId }) === undefined) s.insertThread.run({ threadId, provider: event.provider, lastSeq: threadSeq, at })
      knownThreads.add(threadId)
    }
    touched.set(threadId, { lastSeq: threadSeq, at })
    switch (event.type) {
      case "session.started": {
        const q = event.payload
        return void s.sessionStarted.run({ threadId, cwd: q.cwd ?? null, nativeThreadId: q.nativeThreadId ?? null, nativeSessionId: q.nativeSessionId ?? null, providerVersion: q.providerVersion ?? null })
      }
      case "session.configured": {
        const q = event.payload
        return void s.sessionConfigured.run({ threadId, capabilities: json(q.capabilities), mode: q.mode, nativeMode: q.nativeMode ?? null, model: q.model })
      }
      case "session.state.changed":
        return void s.stateChanged.run({ threadId, state: event.payload.state, flags: json(event.payload.flags) })
      case "session.exited":
        return void s.exited.run({ threadId, exit: json(event.payload) })
      case "mode.changed":
        return void s.modeChanged.run({ threadId, mode: event.payload.mode, nativeMode: event.payload.nativeMode ?? null })
      case "capabilities.changed":
        return void s.capabilitiesChanged.run({ threadId, capabilities: json(event.payload.capabilities) })
      case "turn.started":
        return void s.turnStarted.run({ threadId, turnId: event.turnId, mode: event.payload.mode ?? null, at })
      case "turn.completed": {
        const q = event.payload
        return void s.turnCompleted.run({ threadId, turnId: event.turnId, status: q.status, error: json(q.error), usage: json(q.usage), durationMs: q.durationMs ?? null, at })
      }
      case "item.started":
      case "item.updated":
      case "item.completed":
        return projectItem(event)
      case "content.delta": {
        const key = `${threadId}\u0000${event.itemId}`
        const pending = pendingText.get(key)
        if (pending === undefined) {
          const itemType = itemTypeOfStream[event.payload.streamKind]
          pendingText.set(key, { threadId, itemId: event.itemId, turnId: event.turnId, itemType, text: event.payload.delta, startedAt: at, at })
        } else {
          pending.text += event.payload.delta
          pending.at = at
        }
        return
      }
      case "turn.plan.updated":
        return projectPlanSnapshot(event)
      case "plan.proposed.delta":
        return void s.planDelta.run({ planId: event.payload.planId, threadId, turnId: event.turnId, delta: event.payload.delta, at })
      case "plan.proposed.completed": {
        const q = event.payload
        return void s.planCompleted.run({ planId: q.planId, threadId, turnId: event.turnId, markdown: q.markdown, filePath: q.filePath ?? null, title: q.title ?? null, at })
      }
      case "plan.decision": {
        const q = event.payload
        return void s.planDecision.run({
          planId: q.planId,
          threadId,
          turnId: event.turnId,
          status: q.decision === "rejected" ? "rejected" : "approved",
          decision: q.decision,
          feedback: q.feedback ?? null,
          editedMarkdown: q.editedMarkdown ?? null,
          at
        })
      }
      case "request.opened": {
        const q = event.payload
        return void s.requestOpened.run({
          requestId: q.requestId,
          threadId,
          turnId: event.turnId ?? null,
          kind: q.requestKind,
          title: q.title ?? null,
          detail: q.detail ?? null,
          options: json(q.options),
          nativeMethod: q.native.method,
          nativeId: String(q.native.id),
          promptId: q.promptId ?? null,
          planId: q.planId ?? null,
          eventId: event.eventId,
          at
        })
      }
      case "request.resolved":
        return void s.requestResolved.run({ requestId: event.payload.requestId, resolution: event.payload.resolution, optionId: event.payload.optionId ?? null, at })
      case "user-input.requested": {
        const q = event.payload
        return void s.promptRequested.run({
          promptId: q.prompt.promptId,
          threadId,
          turnId: event.turnId ?? null,
          provider: event.provider,
          requestId: q.requestId ?? null,
          prompt: json(q.prompt),
          blocking: q.prompt.blocking ? 1 : 0,
          source: q.prompt.source,
          eventId: event.eventId,
          at
        })
      }
      case "user-input.resolved": {
        const q = event.payload
        return void s.promptResolved.run({ promptId: q.promptId, resolution: q.resolution, answers: json(q.answers), reason: q.reason ?? null, eventId: event.eventId, at })
      }
      case "runtime.warning":
      case "runtime.error":
        // Diagnostics live in the event log only.
        return
    }
  }

  const projectItem = (event: RuntimeEventOf<"item.started" | "item.updated" | "item.completed">): void => {
    flushText(`${event.threadId}\u0000${event.itemId}`)
    const q = event.payload
    s.item.run({
      threadId: event.threadId,
      itemId: event.itemId,
      turnId: event.turnId,
      itemType: q.itemType,
      status: q.status,
      title: q.title ?? null,
      toolName: q.toolName ?? null,
      data: json(q.data),
      text: q.text ?? null,
      at: event.createdAt,
      completedAt: event.type === "item.completed" ? event.createdAt : null
    })
  }

  const projectPlanSnapshot = (event: RuntimeEventOf<"turn.plan.updated">): void => {
    const key = { threadId: event.threadId, turnId: event.turnId }
    const last = s.lastRevision.get<{ revision: number | null }>(key)?.revision ?? 0
    s.unmarkLatest.run(key)
    const plan = event.payload.plan
    s.insertSnapshot.run({ ...key, revision: last + 1, explanation: plan.explanation, steps: json(plan.steps), source: plan.source, eventId: event.eventId, at: event.createdAt })
  }

  /** Writes the per-thread high-water marks once per batch instead of once per event. */
  const finishBatch = (): void => {
    for (const key of [...pendingText.keys()]) flushText(key)
    for (const [threadId, { lastSeq, at }] of touched) s.touchThread.run({ threadId, lastSeq, at })
    touched.clear()
  }

  /** After a rollback or a rebuild the cached knowledge of existing threads is stale. */
  const reset = (): void => {
    pendingText.clear()
    knownThreads.clear()
    touched.clear()
  }

  return { project, finishBatch, reset }
}

export type Projector = ReturnType<typeof makeProjector>

const itemTypeOfStream: Record<StreamKind, string> = {
  assistant_text: "assistant_message",
  reasoning_text: "reasoning",
  plan_text: "plan",
  tool_output: "tool_call"
}
