import {
  IsoDateTime,
  OptionId,
  PlanId,
  RequestId,
  ThreadId,
  UserInputAnswerEntry,
  type ErrorCode,
  type PromptId
} from "@planbridge/contracts"
import { Effect, Exit, Schema } from "effect"
import type { FastifyInstance, FastifyReply } from "fastify"
import { randomUUID } from "node:crypto"
import { commandError } from "../orchestration/CommandErrors.ts"
import { ProviderRegistry } from "../orchestration/ProviderRegistry.ts"
import { SessionManager } from "../orchestration/SessionManager.ts"
import { OperatorQueries } from "../persistence/OperatorQueries.ts"
import { AUDIT_PAGE_DEFAULT, AUDIT_PAGE_MAX } from "../persistence/ResolutionAudit.ts"
import { ThreadReads } from "../persistence/ThreadReads.ts"
import type { ServerRuntime, ServerServices } from "../server/ServerServices.ts"
import { wireFailureOf } from "../server/WireErrors.ts"
import { pendingRequestsOf } from "./PendingRequests.ts"
import { senderOf } from "./RequestSender.ts"

const statusOf: Record<ErrorCode, number> = {
  bad_json: 400,
  invalid_frame: 400,
  invalid_cursor: 400,
  frame_too_large: 413,
  unauthorized: 401,
  protocol_version: 400,
  unknown_provider: 404,
  auth_required: 403,
  unknown_thread: 404,
  unknown_prompt: 404,
  unknown_request: 404,
  already_resolved: 409,
  client_request_conflict: 409,
  invalid_answer: 422,
  session_not_live: 409,
  busy: 409,
  unsupported: 501,
  provider_error: 502,
  resume_failed: 410,
  internal: 500
}

const ListQuery = Schema.Struct({
  status: Schema.optionalKey(Schema.Literals(["pending", "resolved"])),
  provider: Schema.optionalKey(Schema.String),
  threadId: Schema.optionalKey(Schema.String),
  olderThanMs: Schema.optionalKey(Schema.FiniteFromString),
  limit: Schema.optionalKey(Schema.FiniteFromString)
})
const AnswerBody = Schema.Struct({
  answers: Schema.Array(UserInputAnswerEntry),
  clientRequestId: Schema.optionalKey(Schema.String.check(Schema.isNonEmpty()))
})
const AuditParams = Schema.Struct({
  afterSeq: Schema.optionalKey(Schema.NumberFromString.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))),
  since: Schema.optionalKey(IsoDateTime),
  limit: Schema.optionalKey(
    Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: AUDIT_PAGE_MAX }))
  )
})
const CancelBody = Schema.Struct({ clientRequestId: Schema.optionalKey(Schema.String.check(Schema.isNonEmpty())) })
const RequestsQuery = Schema.Struct({ threadId: Schema.optionalKey(ThreadId) })
const RespondBody = Schema.Struct({
  optionId: OptionId,
  clientRequestId: Schema.optionalKey(Schema.String.check(Schema.isNonEmpty()))
})
const DecideBody = Schema.Struct({
  threadId: ThreadId,
  decision: Schema.Literals(["approved", "rejected", "edited"]),
  feedback: Schema.optionalKey(Schema.String),
  editedMarkdown: Schema.optionalKey(Schema.String),
  clientRequestId: Schema.optionalKey(Schema.String.check(Schema.isNonEmpty()))
})

const invalid = (message: string) => commandError("invalid_frame", message)
const decodeOr = <S extends Schema.Codec<unknown, unknown>>(schema: S, input: unknown) =>
  Schema.decodeUnknownEffect(schema)(input ?? {}).pipe(Effect.mapError((e) => invalid(e.message)))

/** Runs a route's effect on the server's runtime and answers its value, or its error with its status. */
export type OperatorReply = (
  res: FastifyReply,
  effect: Effect.Effect<unknown, unknown, ServerServices>
) => Promise<FastifyReply>

export const operatorReply =
  (runtime: ServerRuntime): OperatorReply =>
  async (res, effect) => {
    const exit = await runtime.runPromiseExit(effect)
    if (Exit.isSuccess(exit)) return res.code(200).send(exit.value)
    const { error, unexpected } = wireFailureOf(exit.cause, "request")
    if (unexpected !== undefined) res.log.error({ cause: unexpected }, "operator request failed")
    return res.code(statusOf[error.code] ?? 400).send({ error })
  }

/**
 * The operator API. Every route sits behind the token (checked by the server's hook); errors
 * are `{error: {code, message, path?}}` with a matching HTTP status.
 */
export const registerOperatorRoutes = (app: FastifyInstance, runtime: ServerRuntime): void => {
  const reply = operatorReply(runtime)

  app.get("/api/prompts", (req, res) =>
    reply(
      res,
      Effect.gen(function* () {
        const filter = yield* decodeOr(ListQuery, req.query)
        const queries = yield* OperatorQueries
        return { prompts: yield* queries.listPrompts(filter) }
      })
    )
  )

  /** Who resolved what, in log order, a page at a time (ResolutionAudit.ts). */
  app.get("/api/resolutions", (req, res) =>
    reply(
      res,
      Effect.gen(function* () {
        const params = yield* decodeOr(AuditParams, req.query)
        const { afterSeq = 0, limit = AUDIT_PAGE_DEFAULT, since } = params
        return yield* (yield* OperatorQueries).resolutions(
          since === undefined ? { afterSeq, limit } : { afterSeq, limit, since }
        )
      })
    )
  )

  app.get<{ Params: { id: string } }>("/api/prompts/:id", (req, res) =>
    reply(
      res,
      Effect.gen(function* () {
        return yield* (yield* OperatorQueries).getPrompt(req.params.id)
      })
    )
  )

  app.post<{ Params: { id: string } }>("/api/prompts/:id/answer", (req, res) =>
    reply(
      res,
      Effect.gen(function* () {
        const body = yield* decodeOr(AnswerBody, req.body)
        const by = yield* senderOf(req.headers)
        const sessions = yield* SessionManager
        return yield* sessions.respondToUserInput(
          req.params.id as PromptId,
          body.answers,
          body.clientRequestId ?? randomUUID(),
          by
        )
      })
    )
  )

  app.post<{ Params: { id: string } }>("/api/prompts/:id/cancel", (req, res) =>
    reply(
      res,
      Effect.gen(function* () {
        const body = yield* decodeOr(CancelBody, req.body)
        const by = yield* senderOf(req.headers)
        const sessions = yield* SessionManager
        return yield* sessions.dismissUserInput(
          req.params.id as PromptId,
          "cancelled",
          body.clientRequestId ?? randomUUID(),
          by
        )
      })
    )
  )

  // Approvals and plan decisions: pending only on a live thread (a session's end resolves them).
  app.get("/api/requests", (req, res) =>
    reply(
      res,
      Effect.gen(function* () {
        const { threadId } = yield* decodeOr(RequestsQuery, req.query)
        const sessions = yield* SessionManager
        const reads = yield* ThreadReads
        const live = (yield* reads.list(sessions.isLive)).filter(
          (t) => t.live && (threadId === undefined || t.threadId === threadId)
        )
        const snapshots = yield* Effect.forEach(live, (t) => reads.snapshot(t.threadId))
        const requests = snapshots.flatMap((s) => (s === undefined ? [] : pendingRequestsOf(s)))
        return { requests: requests.toSorted((a, b) => b.createdAt.localeCompare(a.createdAt)) }
      })
    )
  )

  app.post<{ Params: { id: string } }>("/api/requests/:id/respond", (req, res) =>
    reply(
      res,
      Effect.gen(function* () {
        const body = yield* decodeOr(RespondBody, req.body)
        const requestId = yield* decodeOr(RequestId, req.params.id)
        const by = yield* senderOf(req.headers)
        return yield* (yield* SessionManager).respondToRequest(
          requestId,
          body.optionId,
          body.clientRequestId ?? randomUUID(),
          by
        )
      })
    )
  )

  app.post<{ Params: { id: string } }>("/api/plans/:id/decide", (req, res) =>
    reply(
      res,
      Effect.gen(function* () {
        const { clientRequestId, ...decision } = yield* decodeOr(DecideBody, req.body)
        const planId = yield* decodeOr(PlanId, req.params.id)
        const by = yield* senderOf(req.headers)
        return yield* (yield* SessionManager).decidePlan({ ...decision, planId }, clientRequestId ?? randomUUID(), by)
      })
    )
  )

  app.get("/api/providers", (_req, res) =>
    reply(
      res,
      Effect.gen(function* () {
        return { providers: yield* (yield* ProviderRegistry).probed }
      })
    )
  )

  app.get("/api/threads", (_req, res) =>
    reply(
      res,
      Effect.gen(function* () {
        const sessions = yield* SessionManager
        return { threads: yield* (yield* ThreadReads).list(sessions.isLive) }
      })
    )
  )

  app.get<{ Params: { id: string } }>("/api/threads/:id", (req, res) =>
    reply(
      res,
      Effect.gen(function* () {
        const snapshot = yield* (yield* ThreadReads).snapshot(req.params.id as ThreadId)
        if (snapshot === undefined) {
          const message = `no thread with id '${req.params.id}'`
          return yield* Effect.fail(commandError("unknown_thread", message))
        }
        return snapshot
      })
    )
  )
}
