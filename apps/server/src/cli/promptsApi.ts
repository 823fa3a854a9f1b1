import {
  IsoDateTime,
  RequestOption,
  ResolvedBy,
  RuntimeEvent,
  UserInputAnswerEntry,
  UserInputPrompt
} from "@planbridge/contracts"
import { Schema } from "effect"

/**
 * The operator API's bodies as `planbridge prompts` reads them (PROTOCOL.md#operator-http-api),
 * decoded before anything is printed, so a server of another version fails with the path of
 * what differs rather than with a half-printed card.
 */
export const PromptView = Schema.Struct({
  promptId: Schema.String,
  threadId: Schema.String,
  turnId: Schema.NullOr(Schema.String),
  provider: Schema.String,
  status: Schema.Literals(["pending", "resolved"]),
  resolution: Schema.NullOr(Schema.String),
  prompt: UserInputPrompt,
  answers: Schema.NullOr(Schema.Array(UserInputAnswerEntry)),
  reason: Schema.NullOr(Schema.String),
  createdAt: IsoDateTime,
  resolvedAt: Schema.NullOr(IsoDateTime),
  /** Absent from a server older than issue 29. */
  resolvedBy: Schema.optionalKey(Schema.NullOr(ResolvedBy))
})
export type PromptView = typeof PromptView.Type

export const PromptList = Schema.Struct({ prompts: Schema.Array(PromptView) })
export type PromptList = typeof PromptList.Type

export const PromptDetail = Schema.Struct({
  ...PromptView.fields,
  request: Schema.NullOr(
    Schema.Struct({
      requestId: Schema.String,
      nativeMethod: Schema.String,
      nativeId: Schema.String,
      status: Schema.String
    })
  ),
  timeline: Schema.Array(Schema.Struct({ seq: Schema.Int, threadSeq: Schema.Int, event: RuntimeEvent }))
})
export type PromptDetail = typeof PromptDetail.Type

/**
 * A refusal: the operator API's `{error: {code, message}}`, or the HTTP framework's own
 * `{statusCode, code?, error, message}` (an unknown route, a body too large).
 */
export const ErrorBody = Schema.Union([
  Schema.Struct({
    error: Schema.Struct({
      code: Schema.String,
      message: Schema.String,
      // What was wrong in the request (threads import's `provider`, `nativeSessionId`), kept under --json.
      path: Schema.optionalKey(Schema.Array(Schema.Union([Schema.String, Schema.Number])))
    })
  }),
  Schema.Struct({ code: Schema.optionalKey(Schema.String), message: Schema.String })
])
export type ErrorBody = typeof ErrorBody.Type

/** An approval or plan decision waiting for a person (`GET /api/requests`; http/PendingRequests.ts). */
export const PendingRequest = Schema.Struct({
  requestId: Schema.String,
  threadId: Schema.String,
  provider: Schema.String,
  turnId: Schema.NullOr(Schema.String),
  kind: Schema.String,
  title: Schema.NullOr(Schema.String),
  detail: Schema.NullOr(Schema.String),
  options: Schema.Array(RequestOption),
  plan: Schema.NullOr(
    Schema.Struct({
      planId: Schema.String,
      markdown: Schema.String,
      supportsEdits: Schema.Boolean,
      supportsFeedback: Schema.Boolean
    })
  ),
  createdAt: IsoDateTime
})
export type PendingRequest = typeof PendingRequest.Type

export const PendingRequestList = Schema.Struct({ requests: Schema.Array(PendingRequest) })
export type PendingRequestList = typeof PendingRequestList.Type
