import { requestDetailView, type RuntimeEventOf } from "@planbridge/contracts"
import { jsonColumn } from "./JsonColumn.ts"
import type { ProjectionStatements } from "./ProjectionStatements.ts"

/**
 * What answers are routed to (AnswerTargets.ts): native requests and user-input prompts, each
 * written as its event comes. The first resolution wins (see the statements).
 */
export const makeAnswerTargetProjection = (s: ProjectionStatements) => {
  const requestOpened = (event: RuntimeEventOf<"request.opened">): void => {
    const q = event.payload
    s.requestOpened.run({
      requestId: q.requestId,
      threadId: event.threadId,
      turnId: event.turnId ?? null,
      kind: q.requestKind,
      title: q.title ?? null,
      detail: requestDetailView(q),
      options: jsonColumn(q.options),
      nativeMethod: q.native.method,
      nativeId: String(q.native.id),
      promptId: q.promptId ?? null,
      planId: q.planId ?? null,
      eventId: event.eventId,
      at: event.createdAt
    })
  }

  const requestResolved = (event: RuntimeEventOf<"request.resolved">): void =>
    void s.requestResolved.run({
      requestId: event.payload.requestId,
      resolution: event.payload.resolution,
      optionId: event.payload.optionId ?? null,
      resolvedBy: jsonColumn(event.payload.resolvedBy),
      at: event.createdAt
    })

  const promptRequested = (event: RuntimeEventOf<"user-input.requested">): void => {
    const q = event.payload
    s.promptRequested.run({
      promptId: q.prompt.promptId,
      threadId: event.threadId,
      turnId: event.turnId ?? null,
      provider: event.provider,
      requestId: q.requestId ?? null,
      prompt: jsonColumn(q.prompt),
      blocking: q.prompt.blocking ? 1 : 0,
      source: q.prompt.source,
      eventId: event.eventId,
      at: event.createdAt
    })
  }

  const promptResolved = (event: RuntimeEventOf<"user-input.resolved">): void => {
    const q = event.payload
    s.promptResolved.run({
      promptId: q.promptId,
      resolution: q.resolution,
      answers: jsonColumn(q.answers),
      reason: q.reason ?? null,
      resolvedBy: jsonColumn(q.resolvedBy),
      eventId: event.eventId,
      at: event.createdAt
    })
  }

  return { requestOpened, requestResolved, promptRequested, promptResolved }
}
