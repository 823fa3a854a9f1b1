import { Schema } from "effect"
import { decodeWith } from "./AcpProfile.ts"
import type { NativeQuestion, QuestionAnswer, QuestionHandler, QuestionOutcome, QuestionRequest } from "./AcpProfile.ts"
import { definedFields } from "../../util/definedFields.ts"

/**
 * ACP `elicitation/create` in form mode: a restricted JSON schema (flat object of string,
 * number, integer, boolean and multi-select fields) read as one question per field, answered
 * with `{action:"accept", content}`, `decline` (resolved without an answer) or `cancel`.
 */

const OptStr = Schema.optionalKey(Schema.NullOr(Schema.String))
const EnumOption = Schema.Struct({ const: Schema.String, title: Schema.String, description: OptStr })
const Property = Schema.Struct({
  type: Schema.String,
  title: OptStr,
  description: OptStr,
  enum: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
  oneOf: Schema.optionalKey(Schema.NullOr(Schema.Array(EnumOption))),
  items: Schema.optionalKey(
    Schema.Struct({
      enum: Schema.optionalKey(Schema.Array(Schema.String)),
      anyOf: Schema.optionalKey(Schema.Array(EnumOption))
    })
  )
})
type Property = typeof Property.Type

const FormParams = Schema.Struct({
  mode: Schema.Literal("form"),
  message: Schema.String,
  toolCallId: OptStr,
  requestedSchema: Schema.Struct({
    title: OptStr,
    description: OptStr,
    properties: Schema.optionalKey(Schema.Record(Schema.String, Property)),
    required: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String)))
  })
})

const Response = Schema.Union([
  Schema.Struct({
    action: Schema.Literal("accept"),
    content: Schema.optionalKey(Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)))
  }),
  Schema.Struct({ action: Schema.Literals(["decline", "cancel"]) })
])

type Option = NativeQuestion["options"][number]
const enumOption = (o: typeof EnumOption.Type): Option => ({
  id: o.const,
  label: o.title,
  ...definedFields({ description: o.description ?? undefined })
})

const yesNo = [
  { id: "true", label: "Yes" },
  { id: "false", label: "No" }
]

const present = (s: string | null | undefined): s is string => s !== null && s !== undefined && s.length > 0

const questionOf = (key: string, property: Property, required: boolean): NativeQuestion | string => {
  const base = {
    id: key,
    label: present(property.title) ? property.title : key,
    ...(present(property.description) ? { description: property.description } : {}),
    required,
    valueKind: property.type
  }
  switch (property.type) {
    case "string": {
      const options = property.oneOf?.map(enumOption) ?? property.enum?.map((v) => ({ id: v, label: v })) ?? []
      return { ...base, options, multiSelect: false, allowFreeform: options.length === 0 }
    }
    case "number":
    case "integer":
      return { ...base, options: [], multiSelect: false, allowFreeform: true }
    case "boolean":
      return { ...base, options: yesNo, multiSelect: false, allowFreeform: false }
    case "array": {
      const options =
        property.items?.anyOf?.map(enumOption) ?? property.items?.enum?.map((v) => ({ id: v, label: v })) ?? []
      return options.length > 0
        ? { ...base, options, multiSelect: true, allowFreeform: false }
        : `field '${key}' is an array without options`
    }
    default:
      return `field '${key}' has unsupported type '${property.type}'`
  }
}

const numeric = (question: NativeQuestion | undefined, text: string | undefined): number | undefined => {
  if (text === undefined || text.trim().length === 0) return undefined
  const value = Number(text)
  if (!Number.isFinite(value)) return undefined
  return question?.valueKind === "integer" && !Number.isInteger(value) ? undefined : value
}

const valueOf = (question: NativeQuestion | undefined, answer: QuestionAnswer): unknown => {
  switch (question?.valueKind) {
    case "boolean":
      return answer.selectedOptionIds[0] === "true"
    case "number":
    case "integer":
      return numeric(question, answer.text)
    case "array":
      return [...answer.selectedOptionIds]
    default:
      return question !== undefined && question.options.length > 0 ? answer.selectedOptionIds[0] : (answer.text ?? "")
  }
}

export const elicitationForm: QuestionHandler = {
  kind: "question",
  decode: (params) => {
    const decoded = decodeWith(FormParams)(params)
    if (!decoded.ok) return decoded
    const form = decoded.value
    const required = new Set(form.requestedSchema.required ?? [])
    const questions: Array<NativeQuestion> = []
    for (const [key, property] of Object.entries(form.requestedSchema.properties ?? {})) {
      const question = questionOf(key, property, required.has(key))
      if (typeof question === "string") return { ok: false, error: question }
      questions.push(question)
    }
    const request: QuestionRequest = {
      toolCallId: form.toolCallId ?? undefined,
      title: form.message,
      ...(present(form.requestedSchema.description) ? { description: form.requestedSchema.description } : {}),
      questions
    }
    return { ok: true, value: request }
  },
  check: (answers, request) => {
    for (const answer of answers) {
      const question = request.questions.find((q) => q.id === answer.questionId)
      if (
        (question?.valueKind === "number" || question?.valueKind === "integer") &&
        numeric(question, answer.text) === undefined
      ) {
        return `field '${answer.questionId}' takes ${question.valueKind === "integer" ? "an integer" : "a number"}`
      }
    }
    return undefined
  },
  encode: (outcome: QuestionOutcome, request) => {
    if (outcome.outcome === "skipped") return { action: "decline" }
    if (outcome.outcome === "cancelled") return { action: "cancel" }
    const question = (id: string) => request.questions.find((q) => q.id === id)
    const content = Object.fromEntries(outcome.answers.map((a) => [a.questionId, valueOf(question(a.questionId), a)]))
    return { action: "accept", content }
  },
  decodeResponse: (result, request) => {
    const decoded = decodeWith(Response)(result)
    if (!decoded.ok) return undefined
    const response = decoded.value
    if (response.action !== "accept")
      return response.action === "decline" ? { outcome: "skipped" } : { outcome: "cancelled" }
    const answers = Object.entries(response.content ?? {}).map(([questionId, value]): QuestionAnswer => {
      const question = request.questions.find((q) => q.id === questionId)
      if (Array.isArray(value)) return { questionId, selectedOptionIds: value.map(String) }
      if (typeof value === "boolean") return { questionId, selectedOptionIds: [String(value)] }
      if (typeof value === "string" && question !== undefined && question.options.length > 0)
        return { questionId, selectedOptionIds: [value] }
      return { questionId, selectedOptionIds: [], text: String(value) }
    })
    return { outcome: "answered", answers }
  }
}
