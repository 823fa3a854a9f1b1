import type { RuntimeEvent, RuntimeEventOf, StreamKind } from "@planbridge/contracts"
import type { Db } from "./Database.ts"
import { prepareProjectionStatements, type ProjectionStatementName } from "./ProjectionStatements.ts"

const json = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value))

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

/** The projector on the SQLite connection. */
export const makeProjector = (db: Db) => makeProjectorOn(prepareProjectionStatements(db))

/**
 * Applies canonical events to the projection tables. It runs inside the transaction that
 * appends the events, reads nothing but the database and the events (no clock, no
 * randomness), and so replaying the log through it rebuilds exactly the same projections.
 */
export const makeProjectorOn = (s: ProjectionStatements) => {
  /*
   * Rows that many events of a batch touch are folded in memory and written once per batch:
   * items (started, streamed, completed), turns (started, completed), the thread's sequence
   * and state, streamed plan text, checklist revisions. Each fold yields exactly the row that
   * applying its events one by one would leave, whether or not the row existed before the
   * batch, so the projections do not depend on where batches begin and end (a rebuild
   * replays the log in other batches and must come to the same rows). Nothing reads these
   * rows inside the transaction before `finishBatch` writes them.
   */
  const pendingItems = byThread<PendingItem>()
  const pendingTurns = byThread<PendingTurn>()
  const pendingPlanText = new Map<
    string,
    { threadId: string; turnId: string; text: string; createdAt: string; at: string }
  >()
  const pendingSnapshots = byThread<{
    threadId: string
    turnId: string
    revisions: Array<RuntimeEventOf<"turn.plan.updated">>
    /** Where the turn's last revision came in the log, so revisions are written in the log's order. */
    lastOrder: number
  }>()
  let revisionOrder = 0
  /** Threads whose row is known to exist, and what the batch does to them. */
  const knownThreads = new Set<string>()
  const touched = new Map<
    string,
    { lastSeq: number; at: string; state: string | undefined; flags: ReadonlyArray<string> | undefined }
  >()

  const project = (event: RuntimeEvent, threadSeq: number): void => {
    const threadId = event.threadId
    const at = event.createdAt
    if (!knownThreads.has(threadId)) {
      if (s.threadExists.get<{ thread_id: string }>({ threadId }) === undefined)
        s.insertThread.run({ threadId, provider: event.provider, lastSeq: threadSeq, at })
      knownThreads.add(threadId)
    }
    const thread = touched.get(threadId)
    if (thread === undefined) touched.set(threadId, { lastSeq: threadSeq, at, state: undefined, flags: undefined })
    else {
      thread.lastSeq = threadSeq
      thread.at = at
    }
    switch (event.type) {
      case "session.started": {
        const q = event.payload
        // It sets the state (not the flags) itself: an earlier state of the batch is overridden.
        touched.get(threadId)!.state = undefined
        return void s.sessionStarted.run({
          threadId,
          cwd: q.cwd ?? null,
          nativeThreadId: q.nativeThreadId ?? null,
          nativeSessionId: q.nativeSessionId ?? null,
          providerVersion: q.providerVersion ?? null
        })
      }
      case "session.configured": {
        const q = event.payload
        return void s.sessionConfigured.run({
          threadId,
          capabilities: json(q.capabilities),
          mode: q.mode,
          nativeMode: q.nativeMode ?? null,
          model: q.model
        })
      }
      case "session.state.changed": {
        const pending = touched.get(threadId)!
        pending.state = event.payload.state
        pending.flags = event.payload.flags
        return
      }
      case "session.exited": {
        const pending = touched.get(threadId)!
        pending.state = undefined
        pending.flags = undefined
        return void s.exited.run({ threadId, exit: json(event.payload) })
      }
      case "mode.changed":
        return void s.modeChanged.run({
          threadId,
          mode: event.payload.mode,
          nativeMode: event.payload.nativeMode ?? null
        })
      case "capabilities.changed":
        return void s.capabilitiesChanged.run({ threadId, capabilities: json(event.payload.capabilities) })
      case "turn.started": {
        const turn = pendingTurns.get(threadId, event.turnId)
        const mode = event.payload.mode ?? null
        if (turn === undefined)
          pendingTurns.set(threadId, event.turnId, {
            threadId,
            turnId: event.turnId,
            mode,
            startedAt: at,
            completed: undefined
          })
        else if (mode !== null) turn.mode = mode
        return
      }
      case "turn.completed": {
        const q = event.payload
        const completed = {
          status: q.status,
          error: json(q.error),
          usage: json(q.usage),
          durationMs: q.durationMs ?? null,
          at
        }
        const turn = pendingTurns.get(threadId, event.turnId)
        if (turn === undefined)
          pendingTurns.set(threadId, event.turnId, {
            threadId,
            turnId: event.turnId,
            mode: null,
            startedAt: at,
            completed
          })
        else turn.completed = completed
        return
      }
      case "item.started":
      case "item.updated":
      case "item.completed":
        return projectItem(event)
      case "content.delta": {
        const item = pendingItems.get(threadId, event.itemId)
        if (item === undefined) {
          // A delta may arrive for an item never announced; the item is created rather than the text lost.
          const itemType = itemTypeOfStream[event.payload.streamKind]
          pendingItems.set(threadId, event.itemId, {
            threadId,
            itemId: event.itemId,
            turnId: event.turnId,
            itemType,
            status: "inProgress",
            title: null,
            toolName: null,
            data: null,
            text: event.payload.delta,
            chunkSeq: threadSeq,
            startedAt: at,
            updatedAt: at,
            completedAt: null,
            hasItem: false,
            replaceText: false
          })
        } else {
          if (item.chunkSeq === null && !item.replaceText) item.chunkSeq = threadSeq
          item.text += event.payload.delta
          item.updatedAt = at
        }
        return
      }
      case "turn.plan.updated": {
        const pending = pendingSnapshots.get(threadId, event.turnId)
        const lastOrder = revisionOrder++
        if (pending === undefined)
          pendingSnapshots.set(threadId, event.turnId, {
            threadId,
            turnId: event.turnId,
            revisions: [event],
            lastOrder
          })
        else {
          pending.revisions.push(event)
          pending.lastOrder = lastOrder
        }
        return
      }
      case "plan.proposed.delta": {
        const pending = pendingPlanText.get(event.payload.planId)
        if (pending === undefined)
          pendingPlanText.set(event.payload.planId, {
            threadId,
            turnId: event.turnId,
            text: event.payload.delta,
            createdAt: at,
            at
          })
        else {
          pending.text += event.payload.delta
          pending.at = at
        }
        return
      }
      case "plan.proposed.completed": {
        const q = event.payload
        flushPlanText(q.planId)
        return void s.planCompleted.run({
          planId: q.planId,
          threadId,
          turnId: event.turnId,
          markdown: q.markdown,
          filePath: q.filePath ?? null,
          title: q.title ?? null,
          at
        })
      }
      case "plan.decision": {
        const q = event.payload
        flushPlanText(q.planId)
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
        return void s.requestResolved.run({
          requestId: event.payload.requestId,
          resolution: event.payload.resolution,
          optionId: event.payload.optionId ?? null,
          at
        })
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
        return void s.promptResolved.run({
          promptId: q.promptId,
          resolution: q.resolution,
          answers: json(q.answers),
          reason: q.reason ?? null,
          eventId: event.eventId,
          at
        })
      }
      case "runtime.warning":
      case "runtime.error":
        // Diagnostics live in the event log only.
        return
    }
  }

  /** A text on the event replaces the streamed buffer: on completion it is the authoritative text. */
  const projectItem = (event: RuntimeEventOf<"item.started" | "item.updated" | "item.completed">): void => {
    const q = event.payload
    const at = event.createdAt
    const completedAt = event.type === "item.completed" ? at : null
    const item = pendingItems.get(event.threadId, event.itemId)
    if (item === undefined) {
      pendingItems.set(event.threadId, event.itemId, {
        threadId: event.threadId,
        itemId: event.itemId,
        turnId: event.turnId,
        itemType: q.itemType,
        status: q.status,
        title: q.title ?? null,
        toolName: q.toolName ?? null,
        data: json(q.data),
        text: q.text ?? "",
        chunkSeq: null,
        startedAt: at,
        updatedAt: at,
        completedAt,
        hasItem: true,
        replaceText: q.text !== undefined
      })
      return
    }
    item.itemType = q.itemType
    item.status = q.status
    item.title = q.title ?? null
    item.toolName = q.toolName ?? null
    item.data = json(q.data)
    if (q.text !== undefined) {
      item.text = q.text
      item.replaceText = true
    }
    item.updatedAt = at
    if (completedAt !== null) item.completedAt = completedAt
    item.hasItem = true
  }

  const flushPlanText = (planId: string): void => {
    const pending = pendingPlanText.get(planId)
    if (pending === undefined) return
    pendingPlanText.delete(planId)
    s.planDelta.run({
      planId,
      threadId: pending.threadId,
      turnId: pending.turnId,
      delta: pending.text,
      createdAt: pending.createdAt,
      at: pending.at
    })
  }

  /** Every revision is kept; only the newest of its turn is marked latest. */
  const flushSnapshots = (
    threadId: string,
    turnId: string,
    revisions: ReadonlyArray<RuntimeEventOf<"turn.plan.updated">>
  ): void => {
    const key = { threadId, turnId }
    const last = s.lastRevision.get<{ revision: number | null }>(key)?.revision ?? 0
    if (last > 0) s.unmarkLatest.run(key)
    for (const [i, event] of revisions.entries()) {
      const plan = event.payload.plan
      s.insertSnapshot.run({
        threadId,
        turnId,
        revision: last + i + 1,
        isLatest: i === revisions.length - 1,
        explanation: plan.explanation,
        steps: json(plan.steps),
        source: plan.source,
        eventId: event.eventId,
        at: event.createdAt
      })
    }
  }

  /** Writes what the batch folded in memory; called once per batch, inside its transaction. */
  const finishBatch = (): void => {
    for (const item of pendingItems.values()) {
      const flags = { hasItem: item.hasItem ? 1 : 0, replaceText: item.replaceText ? 1 : 0 }
      if (item.replaceText) {
        s.item.run({ ...item, ...flags })
        s.itemChunksCleared.run({ threadId: item.threadId, itemId: item.itemId })
        continue
      }
      // Streamed text is appended as a chunk of its own: the row's text is not rewritten.
      s.item.run({ ...item, ...flags, text: "" })
      if (item.text.length > 0) s.itemChunk.run({ ...item, firstSeq: item.chunkSeq })
    }
    for (const turn of pendingTurns.values()) {
      const done = turn.completed
      s.turn.run({
        threadId: turn.threadId,
        turnId: turn.turnId,
        mode: turn.mode,
        startedAt: turn.startedAt,
        completed: done === undefined ? 0 : 1,
        status: done === undefined ? "inProgress" : done.status,
        error: done?.error ?? null,
        usage: done?.usage ?? null,
        durationMs: done?.durationMs ?? null,
        completedAt: done?.at ?? null
      })
    }
    for (const planId of pendingPlanText.keys()) flushPlanText(planId)
    // By each turn's last revision: the revision written last (SQLite's highest rowid, what a
    // snapshot's `latestPlan` reads) is then the newest in the log, also when two turns of one
    // thread revise their checklists in one batch.
    const snapshots = [...pendingSnapshots.values()].sort((a, b) => a.lastOrder - b.lastOrder)
    for (const { threadId, turnId, revisions } of snapshots) flushSnapshots(threadId, turnId, revisions)
    for (const [threadId, { lastSeq, at, state, flags }] of touched) {
      s.touchThread.run({
        threadId,
        lastSeq,
        at,
        state: state ?? null,
        flags: flags === undefined ? null : JSON.stringify(flags)
      })
    }
    clearBatch()
  }

  const clearBatch = (): void => {
    pendingItems.clear()
    pendingTurns.clear()
    pendingPlanText.clear()
    pendingSnapshots.clear()
    touched.clear()
  }

  /** After a rollback or a rebuild the cached knowledge of existing threads is stale. */
  const reset = (): void => {
    clearBatch()
    knownThreads.clear()
  }

  return { project, finishBatch, reset }
}

export type Projector = ReturnType<typeof makeProjector>

/** An item row as the batch's events leave it (see the `item` statement). */
interface PendingItem {
  readonly threadId: string
  readonly itemId: string
  readonly turnId: string
  itemType: string
  status: string
  title: string | null
  toolName: string | null
  data: string | null
  /** Replacing text (with what streamed after it) when `replaceText`, else the batch's streamed text. */
  text: string
  /** The thread sequence of the batch's first delta (the chunk's key), when it streamed text. */
  chunkSeq: number | null
  readonly startedAt: string
  updatedAt: string
  completedAt: string | null
  hasItem: boolean
  replaceText: boolean
}

/** A turn row as the batch's events leave it (see the `turn` statement). */
interface PendingTurn {
  readonly threadId: string
  readonly turnId: string
  mode: string | null
  readonly startedAt: string
  completed:
    | {
        readonly status: string
        readonly error: string | null
        readonly usage: string | null
        readonly durationMs: number | null
        readonly at: string
      }
    | undefined
}

/** Values by thread and id, without composing a key string (an id may contain any character). */
const byThread = <V>() => {
  const threads = new Map<string, Map<string, V>>()
  return {
    get: (threadId: string, id: string): V | undefined => threads.get(threadId)?.get(id),
    set: (threadId: string, id: string, value: V): void => {
      const ids = threads.get(threadId)
      if (ids === undefined) threads.set(threadId, new Map([[id, value]]))
      else ids.set(id, value)
    },
    values: function* (): Generator<V> {
      for (const ids of threads.values()) yield* ids.values()
    },
    clear: (): void => threads.clear()
  }
}

const itemTypeOfStream: Record<StreamKind, string> = {
  assistant_text: "assistant_message",
  reasoning_text: "reasoning",
  plan_text: "plan",
  tool_output: "tool_call"
}
