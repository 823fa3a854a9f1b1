import { OptionId, PromptId, QuestionId, type RequestOption, type UserInputAnswerEntry } from "@planbridge/contracts"
import { Result, Schema } from "effect"
import { fieldAnswers, type CheckedAnswer } from "../kernel/CheckedAnswer.ts"
import {
  elicitationAccept,
  elicitationOf as kernelElicitation,
  elicitationReplyOf,
  ElicitationResponse,
  RequestedSchema,
  type Elicitation
} from "../kernel/ElicitationForm.ts"
import { REDACTED, redactSecrets } from "./CodexPrompts.ts"

/**
 * Codex `mcpServer/elicitation/request`: an MCP server (the user's own, in user mode) asking the
 * person through Codex. Form mode becomes a question card, one question per field
 * (`kernel/ElicitationForm.ts`); URL mode a canonical URL prompt (`PromptUrl`). The answer goes
 * back as MCP's `ElicitResult` (`{action, content?}`), exactly as given. Pure; shared by the live
 * adapter and replay.
 *
 * Secret fields: MCP's form schema has no secret marker (and Codex rejects unknown schema keys),
 * so a server names them in the request's `_meta` under `SECRET_FIELDS_META`; those questions are
 * `secret` and their values are redacted everywhere but on the wire to Codex.
 *
 * Completion: Codex 0.169.0 consumes the MCP server's `notifications/elicitation/complete` itself
 * and tells its client nothing, so a URL prompt resolves `answered` when the person opens it.
 */

export const ELICITATION_METHOD = "mcpServer/elicitation/request"
/** `_meta` key listing the form fields whose answers are secret (a Planbridge convention). */
export const SECRET_FIELDS_META = "io.planbridge/secretFields"

const Common = {
  threadId: Schema.String,
  turnId: Schema.optionalKey(Schema.NullOr(Schema.String)),
  serverName: Schema.String,
  message: Schema.String,
  _meta: Schema.optionalKey(Schema.Unknown)
}
const FormParams = Schema.Struct({ ...Common, mode: Schema.Literal("form"), requestedSchema: RequestedSchema })
const UrlParams = Schema.Struct({
  ...Common,
  mode: Schema.Literal("url"),
  url: Schema.String,
  elicitationId: Schema.String
})
/** Codex's own `openai/form` modes carry a schema of OpenAI's; they are not decoded here. */
const OtherParams = Schema.Struct({ ...Common, mode: Schema.String })
export const ElicitationParams = Schema.Union([FormParams, UrlParams, OtherParams])
export type ElicitationParams = typeof ElicitationParams.Type

const SecretMeta = Schema.Struct({ [SECRET_FIELDS_META]: Schema.Array(Schema.String) })

const secretFields = (meta: unknown): ReadonlySet<string> => {
  const decoded = Schema.decodeUnknownResult(SecretMeta)(meta)
  return new Set(Result.isSuccess(decoded) ? decoded.success[SECRET_FIELDS_META] : [])
}

/**
 * A form without fields asks only yes or no: Codex asks its own MCP tool-call approvals this way
 * (`_meta.codex_approval_kind: "mcp_tool_call"`, message "Allow the … MCP server to run tool …?").
 * It is an approval, not a question card: allow (`accept`), decline, or decline and stop (`cancel`).
 */
export const isConfirmation = (params: ElicitationParams): boolean =>
  params.mode === "form" &&
  "requestedSchema" in params &&
  Object.keys(params.requestedSchema.properties ?? {}).length === 0

/**
 * What Codex says of a tool-call approval in `_meta` (0.171.0, `codex-rs/core` mcp_tool_call):
 * the tool's description, and `persist`, the scopes an allow may be remembered for (`session`,
 * `always`), answered as `_meta: {persist: <scope>}` with the `accept`.
 */
const ApprovalMeta = Schema.Struct({
  tool_description: Schema.optionalKey(Schema.String),
  persist: Schema.optionalKey(Schema.Union([Schema.String, Schema.Array(Schema.String)]))
})

/** A choice offered on an approval (its option id, label and kind), with the whole native response it stands for. */
export const choice = <R>(id: string, label: string, kind: NonNullable<RequestOption["kind"]>, result: R) => ({
  option: { id: OptionId.make(id), label, kind },
  result
})
const remember = (scope: "session" | "always", label: string) =>
  choice(`accept_${scope}`, label, "allow_always", { action: "accept", _meta: { persist: scope } })
const PERSIST_CHOICES = [remember("session", "Allow for this session"), remember("always", "Allow and don't ask again")]

/**
 * The confirmation as an approval: its card (what it is about: its tool's description, when Codex
 * says) and its choices: allow (and, as Codex offers them, remembered), decline, stop.
 */
export const confirmation = (params: ElicitationParams) => {
  const decoded = Schema.decodeUnknownResult(ApprovalMeta)(params._meta)
  const { persist = [], tool_description }: typeof ApprovalMeta.Type = Result.getOrElse(decoded, () => ({}))
  const choices = [
    choice("accept", "Allow", "allow_once", { action: "accept" }),
    ...PERSIST_CHOICES.filter((c) => persist.includes(c.result._meta.persist)),
    choice("decline", "Decline", "reject_once", { action: "decline" }),
    choice("cancel", "Decline and stop the turn", "other", { action: "cancel" })
  ]
  return { card: { title: params.message, detail: tool_description }, choices }
}

/** The canonical prompt of an elicitation request, or why it cannot be shown. */
export const elicitationOf = (params: ElicitationParams, promptId: PromptId): Result.Result<Elicitation, string> => {
  const asked = { promptId, title: `${params.serverName} asks`, message: params.message }
  if (params.mode === "url" && "url" in params)
    return kernelElicitation({ ...asked, url: { url: params.url, elicitationId: params.elicitationId } })
  if (params.mode !== "form" || !("requestedSchema" in params))
    return Result.fail(`elicitation mode '${params.mode}' is not supported`)
  return kernelElicitation({ ...asked, requestedSchema: params.requestedSchema, secret: secretFields(params._meta) })
}

/** The person's checked answer as Codex's `McpServerElicitationRequestResponse`. */
export const elicitationAnswer = ({ prompt, fields }: Elicitation, checked: CheckedAnswer) =>
  elicitationAccept(prompt.url !== undefined, fieldAnswers(checked), fields)

/** A dismissal as MCP says it: skipped is `decline`, cancelled `cancel`. */
export const elicitationDismissal = (resolution: "empty" | "cancelled") => ({
  action: resolution === "empty" ? "decline" : "cancel"
})

const decodeResponse = Schema.decodeUnknownResult(ElicitationResponse)

/** How the client's response resolves the prompt, with the canonical entries it stands for. */
export const elicitationOutcome = (
  { prompt, fields }: Elicitation,
  result: unknown
): {
  readonly resolution: "answered" | "empty" | "cancelled"
  readonly entries: ReadonlyArray<UserInputAnswerEntry>
} => {
  const reply = elicitationReplyOf(result, prompt.url !== undefined, fields)
  if (reply?.action !== "accept")
    return { resolution: reply?.action === "decline" ? "empty" : "cancelled", entries: [] }
  const entries = reply.answers.map((a): UserInputAnswerEntry => ({
    questionId: QuestionId.make(a.questionId),
    ...(a.selectedOptionIds.length > 0 ? { selectedOptionIds: a.selectedOptionIds.map((o) => OptionId.make(o)) } : {}),
    ...(a.text === undefined ? {} : { text: a.text })
  }))
  return { resolution: "answered", entries }
}

/** The response as it may be stored or logged: secret fields' values replaced by a marker. */
export const redactElicitationResponse = (elicitation: Elicitation, result: unknown): unknown => {
  const decoded = decodeResponse(result)
  if (Result.isFailure(decoded)) return REDACTED
  const response = decoded.success
  if (response.action !== "accept" || response.content === undefined || response.content === null) return result
  return { ...response, content: redactSecrets(elicitation.prompt, response.content, REDACTED) }
}
