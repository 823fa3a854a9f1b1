import type { RuntimeEventOf } from "@planbridge/contracts"
import { jsonColumn } from "./JsonColumn.ts"
import type { ProjectionStatements } from "./ProjectionStatements.ts"

/** A proposed plan's text streamed in the batch. */
interface PendingPlanText {
  readonly threadId: string
  readonly turnId: string
  text: string
  readonly createdAt: string
  at: string
}

/**
 * The proposed plans: their streamed text folded per batch (written by `flush`, or before the
 * plan's completion or decision), their completion and decision written at once.
 */
export const makeProposedPlanProjection = (s: ProjectionStatements) => {
  const pendingPlanText = new Map<string, PendingPlanText>()

  const delta = (event: RuntimeEventOf<"plan.proposed.delta">): void => {
    const at = event.createdAt
    const pending = pendingPlanText.get(event.payload.planId)
    if (pending === undefined)
      pendingPlanText.set(event.payload.planId, {
        threadId: event.threadId,
        turnId: event.turnId,
        text: event.payload.delta,
        createdAt: at,
        at
      })
    else {
      pending.text += event.payload.delta
      pending.at = at
    }
  }

  const completed = (event: RuntimeEventOf<"plan.proposed.completed">): void => {
    const q = event.payload
    const at = event.createdAt
    flushPlanText(q.planId)
    s.planCompleted.run({
      planId: q.planId,
      threadId: event.threadId,
      turnId: event.turnId,
      markdown: q.markdown,
      filePath: q.filePath ?? null,
      title: q.title ?? null,
      at
    })
  }

  const decided = (event: RuntimeEventOf<"plan.decision">): void => {
    const q = event.payload
    const at = event.createdAt
    flushPlanText(q.planId)
    s.planDecision.run({
      planId: q.planId,
      threadId: event.threadId,
      turnId: event.turnId,
      status: q.decision === "rejected" ? "rejected" : "approved",
      decision: q.decision,
      feedback: q.feedback ?? null,
      editedMarkdown: q.editedMarkdown ?? null,
      resolvedBy: jsonColumn(q.resolvedBy),
      at
    })
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

  const flush = (): void => {
    for (const planId of pendingPlanText.keys()) flushPlanText(planId)
  }

  const clear = (): void => pendingPlanText.clear()

  return { delta, completed, decided, flush, clear }
}
