import type { RuntimeEvent } from "@planbridge/contracts"
import { makeAnswerTargetProjection } from "./AnswerTargetProjection.ts"
import { makeChecklistProjection } from "./ChecklistProjection.ts"
import type { Db } from "./Database.ts"
import { makeItemProjection } from "./ItemProjection.ts"
import { prepareProjectionStatements, type ProjectionStatements } from "./ProjectionStatements.ts"
import { makeProposedPlanProjection } from "./ProposedPlanProjection.ts"
import { makeThreadProjection } from "./ThreadProjection.ts"
import { makeTurnProjection } from "./TurnProjection.ts"

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
  const threads = makeThreadProjection(s)
  const turns = makeTurnProjection(s)
  const items = makeItemProjection(s)
  const checklists = makeChecklistProjection(s)
  const plans = makeProposedPlanProjection(s)
  const answerTargets = makeAnswerTargetProjection(s)

  const project = (event: RuntimeEvent, threadSeq: number): void => {
    threads.touch(event, threadSeq)
    switch (event.type) {
      case "session.started":
        return threads.sessionStarted(event)
      case "session.configured":
        return threads.sessionConfigured(event)
      case "session.state.changed":
        return threads.stateChanged(event)
      case "session.exited":
        return threads.sessionExited(event)
      case "mode.changed":
        return threads.modeChanged(event)
      case "capabilities.changed":
        return threads.capabilitiesChanged(event)
      case "turn.started":
        return turns.started(event)
      case "turn.completed":
        return turns.completed(event)
      case "item.started":
      case "item.updated":
      case "item.completed":
        return items.itemEvent(event)
      case "content.delta":
        return items.delta(event, threadSeq)
      case "turn.plan.updated":
        return checklists.revised(event)
      case "plan.proposed.delta":
        return plans.delta(event)
      case "plan.proposed.completed":
        return plans.completed(event)
      case "plan.decision":
        return plans.decided(event)
      case "request.opened":
        return answerTargets.requestOpened(event)
      case "request.resolved":
        return answerTargets.requestResolved(event)
      case "user-input.requested":
        return answerTargets.promptRequested(event)
      case "user-input.resolved":
        return answerTargets.promptResolved(event)
      case "runtime.warning":
      case "runtime.error":
        // Diagnostics live in the event log only.
        return
    }
  }

  /** Writes what the batch folded in memory; called once per batch, inside its transaction. */
  const finishBatch = (): void => {
    items.flush()
    turns.flush()
    plans.flush()
    checklists.flush()
    threads.flush()
    clearBatch()
  }

  const clearBatch = (): void => {
    items.clear()
    turns.clear()
    plans.clear()
    checklists.clear()
    threads.clear()
  }

  /** After a rollback or a rebuild the cached knowledge of existing threads is stale. */
  const reset = (): void => {
    clearBatch()
    threads.forget()
  }

  return { project, finishBatch, reset }
}

export type Projector = ReturnType<typeof makeProjector>
