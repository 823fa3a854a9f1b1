import { URL_OPEN_OPTION_ID, URL_QUESTION_ID, UserInputPrompt, urlPrompt, type PromptId } from "@planbridge/contracts"
import { Result, Schema } from "effect"
import { definedFields } from "../../util/definedFields.ts"

/**
 * An elicitation form (MCP `elicitation/create` form mode, which Codex's
 * `mcpServer/elicitation/request`, the Claude SDK's `onElicitation` and ACP's `elicitation/create`
 * all carry): a restricted JSON schema, a flat object of string, number, integer, boolean and
 * multi-select fields, read as one question per field; and the `content` object that answers it.
 * URL mode is a canonical URL prompt (`PromptUrl`), answered by opening it. Pure and
 * provider-neutral: each adapter keeps its own wire envelope around it.
 */

const OptStr = Schema.optionalKey(Schema.NullOr(Schema.String))
const EnumOption = Schema.Struct({ const: Schema.String, title: Schema.String, description: OptStr })
const Property = Schema.Struct({
  type: Schema.String,
  title: OptStr,
  description: OptStr,
  enum: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
  /** MCP's legacy titled enum: a label per `enum` value, by position. */
  enumNames: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
  oneOf: Schema.optionalKey(Schema.NullOr(Schema.Array(EnumOption))),
  items: Schema.optionalKey(
    Schema.Struct({
      enum: Schema.optionalKey(Schema.Array(Schema.String)),
      anyOf: Schema.optionalKey(Schema.Array(EnumOption))
    })
  )
})
type Property = typeof Property.Type

export const RequestedSchema = Schema.Struct({
  title: OptStr,
  description: OptStr,
  properties: Schema.optionalKey(Schema.Record(Schema.String, Property)),
  required: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String)))
})
export type RequestedSchema = typeof RequestedSchema.Type

/** One form field as a question; `valueKind` is the JSON type its value must have on the wire. */
export interface FormField {
  readonly id: string
  readonly label: string
  readonly description?: string
  readonly options: ReadonlyArray<{ readonly id: string; readonly label: string; readonly description?: string }>
  readonly multiSelect: boolean
  readonly allowFreeform: boolean
  readonly required: boolean
  readonly secret: boolean
  readonly valueKind: string
}

/**
 * A question as a native card asks it: a form field, or an ACP agent's own question (with a
 * header, never secret), whose value the wire wants as a string unless its `valueKind` says.
 */
export type AskedQuestion = Omit<FormField, "secret" | "valueKind"> & {
  readonly header?: string
  readonly secret?: boolean
  readonly valueKind?: string
}

/**
 * The questions as a prompt's questions (still to be decoded as `UserInputPrompt` questions by
 * the caller); a form field's `valueKind` stays on the field, where the answer is encoded.
 */
export const fieldQuestions = (questions: ReadonlyArray<AskedQuestion>) =>
  questions.map((q) => ({
    id: q.id,
    label: q.label,
    ...definedFields({ header: q.header, description: q.description }),
    options: q.options.map((o) => ({ id: o.id, label: o.label, ...definedFields({ description: o.description }) })),
    multiSelect: q.multiSelect,
    allowFreeform: q.allowFreeform,
    secret: q.secret ?? false,
    required: q.required
  }))

/** A field's answer as the canonical answer carries it (option ids are the enum values). */
export interface FieldAnswer {
  readonly questionId: string
  readonly selectedOptionIds: ReadonlyArray<string>
  readonly text?: string
}

type Option = FormField["options"][number]
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

const stringOptions = (property: Property): ReadonlyArray<Option> => {
  if (property.oneOf) return property.oneOf.map(enumOption)
  const names = property.enumNames ?? []
  return (property.enum ?? []).map((v, i) => ({ id: v, label: names[i] ?? v }))
}

const fieldOf = (key: string, property: Property, required: boolean, secret: boolean): FormField | string => {
  const base = {
    id: key,
    label: present(property.title) ? property.title : key,
    ...(present(property.description) ? { description: property.description } : {}),
    required,
    secret,
    valueKind: property.type
  }
  switch (property.type) {
    case "string": {
      const options = stringOptions(property)
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

/**
 * The form's fields in schema order, or why one cannot be asked. `secret` names the fields whose
 * answer must stay masked (the schema itself has no such marker; see each adapter for its source).
 */
export const formFields = (
  schema: RequestedSchema,
  secret: ReadonlySet<string> = new Set()
):
  { readonly ok: true; readonly fields: ReadonlyArray<FormField> } | { readonly ok: false; readonly error: string } => {
  const required = new Set(schema.required ?? [])
  const fields: Array<FormField> = []
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    const field = fieldOf(key, property, required.has(key), secret.has(key))
    if (typeof field === "string") return { ok: false, error: field }
    fields.push(field)
  }
  return { ok: true, fields }
}

const numeric = (field: AskedQuestion | undefined, text: string | undefined): number | undefined => {
  if (text === undefined || text.trim().length === 0) return undefined
  const value = Number(text)
  if (!Number.isFinite(value)) return undefined
  return field?.valueKind === "integer" && !Number.isInteger(value) ? undefined : value
}

/** Wire-level checks beyond `validateAnswer`: a number field takes a number. A message when refused. */
export const checkFieldAnswers = (
  answers: ReadonlyArray<FieldAnswer>,
  fields: ReadonlyArray<AskedQuestion>
): string | undefined => {
  for (const answer of answers) {
    const field = fields.find((f) => f.id === answer.questionId)
    if ((field?.valueKind === "number" || field?.valueKind === "integer") && numeric(field, answer.text) === undefined)
      return `field '${answer.questionId}' takes ${field.valueKind === "integer" ? "an integer" : "a number"}`
  }
  return undefined
}

const valueOf = (field: AskedQuestion | undefined, answer: FieldAnswer): unknown => {
  switch (field?.valueKind) {
    case "boolean":
      return answer.selectedOptionIds[0] === "true"
    case "number":
    case "integer":
      return numeric(field, answer.text)
    case "array":
      return [...answer.selectedOptionIds]
    default:
      return field !== undefined && field.options.length > 0 ? answer.selectedOptionIds[0] : (answer.text ?? "")
  }
}

/** The `content` of an `accept`: each answered field's value in its JSON type, exactly as given. */
export const formContent = (
  answers: ReadonlyArray<FieldAnswer>,
  fields: ReadonlyArray<AskedQuestion>
): Record<string, unknown> =>
  Object.fromEntries(
    answers.map((a) => [
      a.questionId,
      valueOf(
        fields.find((f) => f.id === a.questionId),
        a
      )
    ])
  )

/** The answers an `accept`'s `content` stands for (replay, recorded responses). */
export const answersFromContent = (
  content: Readonly<Record<string, unknown>>,
  fields: ReadonlyArray<AskedQuestion>
): ReadonlyArray<FieldAnswer> =>
  Object.entries(content).map(([questionId, value]): FieldAnswer => {
    const field = fields.find((f) => f.id === questionId)
    if (Array.isArray(value)) return { questionId, selectedOptionIds: value.map(String) }
    if (typeof value === "boolean") return { questionId, selectedOptionIds: [String(value)] }
    if (typeof value === "string" && field !== undefined && field.options.length > 0)
      return { questionId, selectedOptionIds: [value] }
    return { questionId, selectedOptionIds: [], text: String(value) }
  })

/** An elicitation's answer as the client sends it (MCP `ElicitResult`, ACP alike). */
export const ElicitationResponse = Schema.Union([
  Schema.Struct({
    action: Schema.Literal("accept"),
    content: Schema.optionalKey(Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)))
  }),
  Schema.Struct({ action: Schema.Literals(["decline", "cancel"]) })
])
export type ElicitationResponse = typeof ElicitationResponse.Type

/** What an open elicitation needs to encode and read its answers: its prompt, its form's fields (none for a URL). */
export interface Elicitation {
  readonly prompt: UserInputPrompt
  readonly fields: ReadonlyArray<FormField>
}

const decodePrompt = Schema.decodeUnknownResult(UserInputPrompt)

/** An elicitation as a canonical prompt: a URL prompt, or one question per form field; or why it cannot be shown. */
export const elicitationOf = (asked: {
  readonly promptId: PromptId
  readonly title: string
  readonly message: string
  readonly url?: { readonly url: string; readonly elicitationId?: string } | undefined
  readonly requestedSchema?: RequestedSchema | undefined
  /** The fields whose answers stay masked (the schema has no such marker; see each adapter). */
  readonly secret?: ReadonlySet<string>
}): Result.Result<Elicitation, string> => {
  const { promptId, title, message } = asked
  const checked = (fields: ReadonlyArray<FormField>, prompt: unknown) =>
    Result.mapBoth(decodePrompt(prompt), { onSuccess: (prompt) => ({ prompt, fields }), onFailure: (e) => e.message })
  if (asked.url !== undefined) return checked([], urlPrompt({ promptId, message, url: asked.url, title }))
  const fields = formFields(asked.requestedSchema ?? {}, asked.secret)
  if (!fields.ok) return Result.fail(fields.error)
  const questions = fieldQuestions(fields.fields)
  return checked(fields.fields, { promptId, title, description: message, questions, source: "native", blocking: true })
}

/** The answer that opening a URL prompt stands for. */
export const URL_OPENED = { questionId: URL_QUESTION_ID, selectedOptionIds: [URL_OPEN_OPTION_ID] }

/** The person's answers as an `accept`: opening a URL carries no content, a form its fields' values. */
export const elicitationAccept = (
  url: boolean,
  answers: ReadonlyArray<FieldAnswer>,
  fields: ReadonlyArray<AskedQuestion>
) => (url ? { action: "accept" } : { action: "accept", content: formContent(answers, fields) })

const decodeResponse = Schema.decodeUnknownResult(ElicitationResponse)

/** What a client's `ElicitResult` says: declined, cancelled, or the answers it stands for; undefined when it is none. */
export const elicitationReplyOf = (
  result: unknown,
  url: boolean,
  fields: ReadonlyArray<AskedQuestion>
):
  | { readonly action: "decline" | "cancel" }
  | { readonly action: "accept"; readonly answers: ReadonlyArray<FieldAnswer> }
  | undefined => {
  const decoded = decodeResponse(result)
  if (Result.isFailure(decoded)) return undefined
  const response = decoded.success
  if (response.action !== "accept") return { action: response.action }
  return { action: "accept", answers: url ? [URL_OPENED] : answersFromContent(response.content ?? {}, fields) }
}
