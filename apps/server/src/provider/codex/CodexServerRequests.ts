import {
  redactAnswerEntries,
  type ItemId,
  type OptionId,
  type PromptResolutionKind,
  type RawNative,
  type RequestOption,
  type TurnId,
  type UserInputAnswerEntry,
  type UserInputPrompt
} from "@planbridge/contracts"
import { Result, Schema } from "effect"
import {
  CommandApprovalParams,
  FileChangeApprovalParams,
  RequestUserInputParams,
  RequestUserInputResponse,
  ServerRequestResolved,
  type ApprovalDecision,
  type JsonRpcError,
  type JsonRpcId,
  type JsonRpcRequest
} from "./CodexProtocol.ts"
import { ELICITATION_METHOD, ElicitationParams, elicitationOf, elicitationOutcome } from "./CodexElicitation.ts"
import { confirmation, isConfirmation } from "./CodexElicitation.ts"
import { elicitationAnswer, elicitationDismissal, redactElicitationResponse } from "./CodexElicitation.ts"
import {
  PERMISSIONS_METHOD,
  PermissionsApprovalParams,
  permissionsChoices,
  permissionsDetail
} from "./CodexPermissionsRequest.ts"
import {
  entriesFromNativeAnswer,
  nativeAnswer,
  promptFromRequest,
  REDACTED,
  redactNativeAnswer
} from "./CodexPrompts.ts"
import {
  type ApprovalChoice,
  type CodexMappingState,
  type Mapped,
  type OpenServerRequest
} from "./CodexMappingState.ts"
import { promptIdOf, requestIdOf } from "../kernel/ids.ts"
import { jsonRpcIdKey as idKey } from "../kernel/jsonRpcId.ts"
import { rawOf } from "../kernel/EventDraft.ts"
import {
  approvalOpened,
  promptResolved,
  questionOpened,
  requestResolved,
  requestEnd,
  type ApprovalCard
} from "../kernel/RequestDrafts.ts"
import { awaitingInTurn, withAnswered, withClosed, withOpened } from "../kernel/OpenRequests.ts"
import { adapterError } from "../AdapterError.ts"
import type { NativeReplies } from "../kernel/Answers.ts"
import type { TranscriptEntry } from "../kernel/transcript.ts"
import { decodedOr, each, mapped, warned } from "../kernel/Mapped.ts"

/**
 * Server → client requests (questions, approvals), the client's answers to them, and every way
 * they end: answered, resolved by the server, cancelled with their turn, or orphaned when the
 * provider exits. Each open request ends exactly once in the canonical stream.
 */

const SERVER_REQUEST = "codex.app-server.request"
const CLIENT_RESPONSE = "codex.app-server.client-response"

/** Where a request's events go: its turn and item; an MCP elicitation has no item, maybe no turn. */
const withTurnItem = (r: { readonly turnId: string; readonly itemId: string }) =>
  r.itemId === ""
    ? r.turnId === ""
      ? {}
      : { turnId: r.turnId as TurnId }
    : { turnId: r.turnId as TurnId, itemId: r.itemId as ItemId }

/** Codex's native request key: its turn and item (and approval), unique in the thread (turn ids are UUIDv7). */
const nativeKey = (turnId: string, itemId: string, approvalId?: string | null) =>
  `${turnId}:${itemId}${approvalId ? `:${approvalId}` : ""}`

const decisionId = (decision: ApprovalDecision): string =>
  typeof decision === "string" ? decision : (Object.keys(decision)[0] ?? "unknown")

const DECISION_LABELS: Readonly<Record<string, { readonly label: string; readonly kind: RequestOption["kind"] }>> = {
  accept: { label: "Allow once", kind: "allow_once" },
  acceptForSession: { label: "Allow for this session", kind: "allow_always" },
  acceptWithExecpolicyAmendment: { label: "Allow and remember this command", kind: "allow_always" },
  applyNetworkPolicyAmendment: { label: "Apply the network policy change", kind: "other" },
  decline: { label: "Decline", kind: "reject_once" },
  cancel: { label: "Decline and stop the turn", kind: "other" }
}

/** File-change approvals carry no decision list; these are the decisions its response type allows. */
const DEFAULT_DECISIONS: ReadonlyArray<ApprovalDecision> = ["accept", "acceptForSession", "decline", "cancel"]

/** A choice an approval offers: its option, and the decision or whole response it answers with. */
type Offer = Omit<ApprovalChoice, "optionId"> & { readonly option: RequestOption }

/** A command or file-change decision as a choice, labelled as Codex's own clients label it. */
const decisionOffer = (decision: ApprovalDecision): Offer => {
  const id = decisionId(decision)
  const known = DECISION_LABELS[id]
  return { option: { id: id as OptionId, label: known?.label ?? id, kind: known?.kind ?? "other" }, decision }
}

/** The response a choice answers with: its own, or `{decision}`. */
const responseOf = (choice: ApprovalChoice): unknown => choice.result ?? { decision: choice.decision }

type Opening = Omit<OpenServerRequest, "key" | "kind" | "promptId" | "blocking" | "answered">

const opened = (s: CodexMappingState, request: Opening): CodexMappingState => {
  const { prompt } = request
  const open: OpenServerRequest = {
    ...request,
    key: idKey(request.nativeId),
    kind: prompt === undefined ? "approval" : "prompt",
    promptId: prompt?.promptId,
    blocking: prompt?.blocking === true,
    answered: false
  }
  return { ...s, serverRequests: withOpened(s.serverRequests, open) }
}

const nativeOf = (request: Opening) => ({ method: request.method, id: request.nativeId })

/** A server request being mapped: the state it arrives in, the request, its raw form. */
type Asked = { readonly s: CodexMappingState; readonly msg: JsonRpcRequest; readonly raw: RawNative }

/** A question opened: the request remembered, its `request.opened` and `user-input.requested`. */
const askQuestion = (
  { s, raw }: Asked,
  request: Opening & { readonly prompt: UserInputPrompt },
  titled?: { readonly title?: string | undefined }
) => {
  const { requestId, prompt } = request
  return mapped(
    opened(s, request),
    ...questionOpened(withTurnItem(request), raw, requestId, prompt, nativeOf(request), titled)
  )
}

/** An approval opened: the request remembered with its choices, its `request.opened` with their options. */
const askApproval = (
  { s, raw }: Asked,
  request: Opening,
  card: Omit<ApprovalCard, "requestKind" | "options">,
  offers: ReadonlyArray<Offer>
) => {
  const choices = offers.map(({ option, ...answer }): ApprovalChoice => ({ optionId: option.id, ...answer }))
  const opening = { requestKind: "approval", ...card, options: offers.map((o) => o.option) } as const
  return mapped(
    opened(s, { ...request, choices }),
    approvalOpened(withTurnItem(request), raw, request.requestId, nativeOf(request), opening)
  )
}

const decode = <S extends Schema.Decoder<unknown>>(schema: S, input: unknown) =>
  Schema.decodeUnknownResult(schema)(input)

// Refused with its reason, on the wire and as a warning the client shows: never silently.
const refuse = ({ s, msg, raw }: Asked, message: string, code = -32601): Mapped => ({
  ...warned(s, "codex.unsupported_request", message, raw),
  replies: [{ id: msg.id, error: { code, message } }]
})

/** The request in its turn and item, by its native key (its turn and item unless said). */
const at = ({ s, msg }: Asked, turnId: string, itemId: string, native = nativeKey(turnId, itemId)) => ({
  nativeId: msg.id,
  method: msg.method,
  requestId: requestIdOf(s.threadId, native),
  turnId,
  itemId
})

/** A request read: its params `schema` decodes, then `map` maps; refused with `code` and why they cannot be read. */
const read =
  <S extends Schema.Decoder<unknown>>(schema: S, code: number, map: (asked: Asked, params: S["Type"]) => Mapped) =>
  (asked: Asked): Mapped => {
    const failed = (why: string) => refuse(asked, `cannot read ${asked.msg.method}: ${why}`, code)
    return decodedOr(schema, failed)(asked.msg.params, (params) => map(asked, params))
  }

/** A command or file-change approval: what runs and where, structured (the card shows both). */
const approve = (isCommand: boolean) => (asked: Asked, params: typeof CommandApprovalParams.Type) => {
  const { command, cwd, turnId, itemId } = params
  const offers = (params.availableDecisions ?? DEFAULT_DECISIONS).map(decisionOffer)
  const title = isCommand ? (command ?? "Run a command") : "Apply file changes"
  const where = { command: command ?? undefined, cwd: cwd ?? undefined }
  const card = { title, detail: params.reason || undefined, ...where }
  return askApproval(asked, at(asked, turnId, itemId, nativeKey(turnId, itemId, params.approvalId)), card, offers)
}

/** The server requests the mapping decodes, by method (the conformance test walks them). */
const requests: Readonly<Record<string, (asked: Asked) => Mapped>> = {
  "item/tool/requestUserInput": read(RequestUserInputParams, -32601, (asked, params) => {
    const { turnId, itemId, questions } = params
    if (questions.length === 0) return refuse(asked, "item/tool/requestUserInput without questions")
    const prompt = promptFromRequest(params, promptIdOf(asked.s.threadId, nativeKey(turnId, itemId)))
    return askQuestion(asked, { ...at(asked, turnId, itemId), prompt })
  }),
  "item/commandExecution/requestApproval": read(CommandApprovalParams, -32601, approve(true)),
  "item/fileChange/requestApproval": read(FileChangeApprovalParams, -32601, approve(false)),
  [PERMISSIONS_METHOD]: read(PermissionsApprovalParams, -32602, (asked, params) => {
    const card = { title: "Grant more permissions", detail: permissionsDetail(params) }
    return askApproval(asked, at(asked, params.turnId, params.itemId), card, permissionsChoices(params))
  }),
  [ELICITATION_METHOD]: read(ElicitationParams, -32602, (asked, params) => {
    const { s, msg } = asked
    const turnId = params.turnId ?? s.activeTurnId ?? ""
    // Keyed by the turn (or thread) and the JSON-RPC id: ids restart with each app-server.
    const native = nativeKey(turnId === "" ? params.threadId : turnId, `elicitation-${idKey(msg.id)}`)
    const opening = at(asked, turnId, "", native)
    if (isConfirmation(params)) {
      const { card, choices } = confirmation(params)
      return askApproval(asked, opening, card, choices)
    }
    const elicitation = elicitationOf(params, promptIdOf(s.threadId, native))
    if (Result.isFailure(elicitation))
      return refuse(asked, `${params.serverName}'s elicitation cannot be shown: ${elicitation.failure}`, -32602)
    const { prompt } = elicitation.success
    return askQuestion(asked, { ...opening, prompt, elicitation: elicitation.success }, { title: prompt.title })
  })
}

export const DecodedServerRequestMethods: ReadonlyArray<string> = Object.keys(requests)

export const mapServerRequest = (s: CodexMappingState, msg: JsonRpcRequest, payload: unknown): Mapped => {
  const asked = { s, msg, raw: rawOf(SERVER_REQUEST, msg.method, payload) }
  const map = requests[msg.method]
  return map === undefined ? refuse(asked, `planbridge does not handle the server request ${msg.method}`) : map(asked)
}

/** The client's JSON-RPC response to a server request: the answer leaves through here. */
export const mapClientResponse = (
  s: CodexMappingState,
  msg: { readonly id: JsonRpcId; readonly result?: unknown; readonly error?: unknown }
): Mapped => {
  const key = idKey(msg.id)
  const request = s.serverRequests.get(key)
  if (request === undefined || request.answered) return mapped(s)
  const answered = (patch: Partial<OpenServerRequest> = {}) => ({
    ...s,
    serverRequests: withAnswered(s.serverRequests, key, patch)
  })
  /** The prompt resolved; the response recorded with `result`, its stored form (an error response as it is). */
  const resolved = (
    prompt: UserInputPrompt,
    resolution: PromptResolutionKind,
    entries: ReadonlyArray<UserInputAnswerEntry>,
    result?: unknown
  ) => {
    const payload = msg.error === undefined ? { id: msg.id, result } : msg
    const raw = rawOf(CLIENT_RESPONSE, request.method, payload)
    const answers = redactAnswerEntries(prompt, entries)
    return mapped(answered(), promptResolved(withTurnItem(request), raw, prompt.promptId, resolution, answers))
  }
  const { prompt, elicitation } = request
  // An error response is how the session dismisses a question as cancelled; it chooses no option.
  if (msg.error !== undefined) return prompt === undefined ? mapped(answered()) : resolved(prompt, "cancelled", [])
  if (prompt !== undefined && elicitation !== undefined) {
    const { resolution, entries } = elicitationOutcome(elicitation, msg.result)
    return resolved(prompt, resolution, entries, redactElicitationResponse(elicitation, msg.result))
  }
  if (prompt !== undefined) {
    const decoded = decode(RequestUserInputResponse, msg.result)
    const response = Result.isSuccess(decoded) ? decoded.success : { answers: {} }
    const entries = entriesFromNativeAnswer(prompt, response)
    return resolved(prompt, entries.length > 0 ? "answered" : "empty", entries, redactNativeAnswer(prompt, response))
  }
  // A result is the choice whose response it is.
  const sent = JSON.stringify(msg.result)
  const chosen = request.choices?.find((c) => JSON.stringify(responseOf(c)) === sent)
  return mapped(answered(chosen !== undefined ? { optionId: chosen.optionId } : {}))
}

/** Our reply to a server request: a JSON-RPC result, or the error that dismisses a question. */
export type CodexReply = { readonly result: unknown } | { readonly error: JsonRpcError }

/** Codex's replies to its open server requests (kernel `Answers.ts`), in its native forms. */
export const codexReplies: NativeReplies<OpenServerRequest, CodexReply> = {
  answer: ({ prompt, elicitation }, checked) => ({
    result: elicitation !== undefined ? elicitationAnswer(elicitation, checked) : nativeAnswer(prompt, checked.entries)
  }),
  dismiss: ({ prompt, elicitation }, resolution) => {
    if (elicitation !== undefined) return { result: elicitationDismissal(resolution) }
    // Every question present and unanswered, as the TUI sends a skipped question.
    if (resolution === "empty") return { result: nativeAnswer(prompt, []) }
    // An error response releases Codex's waiter; 0.171.0 then hands the model an empty answer
    // map, exactly as for "empty" (verified). The mapping records the user's intent: cancelled.
    return { error: { code: -32000, message: "cancelled by the user" } }
  },
  choose: ({ requestId, choices }, optionId) => {
    if (choices === undefined)
      return adapterError("invalid_answer", `request ${requestId} is a question: answer it with respondToUserInput`)
    const choice = choices.find((c) => c.optionId === optionId)
    if (choice === undefined) return adapterError("invalid_answer", `request ${requestId} has no option '${optionId}'`)
    return { result: responseOf(choice) }
  },
  decidePlan: adapterError("unsupported", "Codex proposed plans end the turn; there is no plan decision to send")
}

/** A client message as it may be recorded: the answer to a secret question redacted. */
export const redactTraffic = (entry: TranscriptEntry, state: CodexMappingState | undefined): TranscriptEntry => {
  if (entry.dir !== "out" || state === undefined) return entry
  const msg = entry.msg
  if (typeof msg !== "object" || msg === null || !("id" in msg) || !("result" in msg)) return entry
  const request = state.serverRequests.get(idKey(msg.id as JsonRpcId))
  if (request?.prompt === undefined || !request.prompt.questions.some((q) => q.secret)) return entry
  if (request.elicitation !== undefined)
    return { ...entry, msg: { ...msg, result: redactElicitationResponse(request.elicitation, msg.result) } }
  const decoded = decode(RequestUserInputResponse, msg.result)
  const result = Result.isSuccess(decoded) ? redactNativeAnswer(request.prompt, decoded.success) : REDACTED
  return { ...entry, msg: { ...msg, result } }
}

/**
 * Ends one open request in the canonical stream: `responded` if our answer was recorded, else
 * `ending` (and its prompt with it).
 */
const end = (
  s: CodexMappingState,
  request: OpenServerRequest,
  ending: "cancelled" | "provider_exited",
  raw: RawNative,
  reason: string
): Mapped => {
  const at = withTurnItem(request)
  const next = { ...s, serverRequests: withClosed(s.serverRequests, request.key) }
  return request.answered
    ? mapped(next, requestResolved(at, raw, request.requestId, "responded", request.optionId))
    : mapped(next, ...requestEnd(at, raw, request, ending, [], reason))
}

export const mapServerRequestResolved = (s: CodexMappingState, params: unknown, raw: RawNative): Mapped => {
  const decoded = decode(ServerRequestResolved, params)
  if (Result.isFailure(decoded)) return warned(s, "codex.decode_failed", decoded.failure.message, raw)
  const request = s.serverRequests.get(idKey(decoded.success.requestId))
  // Already ended (its turn completed first, as 0.171.0 orders it): nothing left to say.
  if (request === undefined) return mapped(s)
  return end(s, request, "cancelled", raw, "resolved by the provider without an answer")
}

/**
 * A turn that ends takes its unanswered requests with it (the kernel's cancel rule): the provider
 * will not accept an answer any more (0.171.0 drops it silently), so the prompt is cancelled now,
 * not when a late `serverRequest/resolved` arrives.
 */
export const endRequestsOfTurn = (s: CodexMappingState, turnId: string, status: string, raw: RawNative): Mapped =>
  each(s, awaitingInTurn(s.serverRequests, turnId), (next, request) =>
    end(next, request, "cancelled", raw, `turn ${status}`)
  )

export const endAllRequests = (s: CodexMappingState, raw: RawNative): Mapped =>
  each(s, s.serverRequests.values(), (next, request) =>
    end(next, request, "provider_exited", raw, "the provider process exited")
  )
