import { Result, Schema } from "effect"
import type { QuestionHandler, QuestionRequest } from "./AcpProfile.ts"
import { definedFields } from "../../util/definedFields.ts"
import {
  checkFieldAnswers,
  elicitationAccept,
  elicitationReplyOf,
  formFields,
  RequestedSchema
} from "../kernel/ElicitationForm.ts"

/**
 * ACP `elicitation/create`. Form mode: a restricted JSON schema read as one question per field
 * (`kernel/ElicitationForm.ts`), answered with `{action:"accept", content}`, `decline` (resolved
 * without an answer) or `cancel`. URL mode: a canonical URL prompt (`PromptUrl`): opening it is
 * `accept` without content, and the prompt resolves when the agent sends `elicitation/complete`
 * (`AcpRequestResolve.ts`).
 */

const FormParams = Schema.Struct({
  mode: Schema.Literal("form"),
  message: Schema.String,
  requestedSchema: RequestedSchema
})

const UrlParams = Schema.Struct({
  mode: Schema.Literal("url"),
  message: Schema.String,
  elicitationId: Schema.String,
  url: Schema.String
})

const decodeParams = Schema.decodeUnknownResult(Schema.Union([FormParams, UrlParams]))

export const elicitationForm: QuestionHandler = {
  kind: "question",
  decode: (params) =>
    Result.flatMap(decodeParams(params), (asked): Result.Result<QuestionRequest, Error> => {
      if (asked.mode === "url") {
        const url = { url: asked.url, elicitationId: asked.elicitationId }
        return Result.succeed({ title: asked.message, questions: [], url })
      }
      const fields = formFields(asked.requestedSchema)
      if (!fields.ok) return Result.fail(new Error(fields.error))
      // An empty description is none.
      const description = asked.requestedSchema.description || undefined
      return Result.succeed({ title: asked.message, ...definedFields({ description }), questions: fields.fields })
    }),
  check: (answers, request) => checkFieldAnswers(answers, request.questions),
  encode: (outcome, request) => {
    if (outcome.outcome === "skipped") return { action: "decline" }
    if (outcome.outcome === "cancelled") return { action: "cancel" }
    return elicitationAccept(request.url !== undefined, outcome.answers, request.questions)
  },
  decodeResponse: (result, request) => {
    const reply = elicitationReplyOf(result, request.url !== undefined, request.questions)
    if (reply?.action === "accept") return { outcome: "answered", answers: reply.answers }
    return reply === undefined ? undefined : { outcome: reply.action === "decline" ? "skipped" : "cancelled" }
  }
}
