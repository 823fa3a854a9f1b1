import {
  redactAnswerEntries,
  type ItemId,
  type OptionId,
  type PromptId,
  type RequestOption,
  type TurnId
} from "@planbridge/contracts"
import {
  ApprovalResponse,
  CommandApprovalParams,
  decodeWith,
  FileChangeApprovalParams,
  RequestUserInputParams,
  RequestUserInputResponse,
  ServerRequestResolved,
  type ApprovalDecision,
  type JsonRpcId
} from "./CodexProtocol.ts"
import { ELICITATION_METHOD, ElicitationParams, elicitationOf, elicitationOutcome } from "./CodexElicitation.ts"
import { confirmationChoices, confirmationDetail, isConfirmation } from "./CodexElicitation.ts"
import { redactElicitationResponse } from "./CodexElicitation.ts"
import {
  PERMISSIONS_METHOD,
  PermissionsApprovalParams,
  permissionsChoices,
  permissionsDetail
} from "./CodexPermissionsRequest.ts"
import { entriesFromNativeAnswer, promptFromRequest, REDACTED, redactNativeAnswer } from "./CodexPrompts.ts"
import {
  push,
  requestIdFor,
  update,
  warning,
  type ApprovalChoice,
  type CodexMappingState,
  type Draft,
  type OpenServerRequest
} from "./CodexMappingState.ts"
import { jsonRpcIdKey as idKey } from "../kernel/jsonRpcId.ts"
import { rawOf } from "../kernel/EventDraft.ts"
import { promptResolved, questionOpened, requestResolved } from "../kernel/RequestDrafts.ts"
import { awaitingInTurn, withAnswered, withClosed, withOpened } from "../kernel/OpenRequests.ts"

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

export const promptIdFor = (turnId: string, itemId: string): PromptId => `codex-prompt:${turnId}:${itemId}` as PromptId

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

const choicesOf = (decisions: ReadonlyArray<ApprovalDecision>): ReadonlyArray<ApprovalChoice> =>
  decisions.map((decision) => ({ optionId: decisionId(decision) as OptionId, decision }))

const optionsOf = (choices: ReadonlyArray<ApprovalChoice>): ReadonlyArray<RequestOption> =>
  choices.map(({ optionId }) => {
    const known = DECISION_LABELS[optionId]
    return { id: optionId, label: known?.label ?? optionId, kind: known?.kind ?? "other" }
  })

const withIds = (params: { readonly turnId: string; readonly itemId: string }) => ({
  turnId: params.turnId,
  itemId: params.itemId
})

type Opening = Omit<OpenServerRequest, "key" | "kind" | "promptId" | "blocking" | "answered">

const open = (draft: Draft, request: Opening) => {
  const { prompt } = request
  const opened: OpenServerRequest = {
    ...request,
    key: idKey(request.nativeId),
    kind: prompt === undefined ? "approval" : "prompt",
    promptId: prompt?.promptId,
    blocking: prompt?.blocking === true,
    answered: false
  }
  update(draft, { serverRequests: withOpened(draft.state.serverRequests, opened) })
}

export const mapServerRequest = (
  draft: Draft,
  msg: { readonly id: JsonRpcId; readonly method: string; readonly params?: unknown },
  payload: unknown
): void => {
  const raw = rawOf(SERVER_REQUEST, msg.method, payload)
  const native = { method: msg.method, id: msg.id }
  // Refused with its reason, on the wire and as a warning the client shows: never silently.
  const refuse = (message: string, code = -32601) => {
    warning(draft, "codex.unsupported_request", message, raw)
    draft.replies.push({ id: msg.id, error: { code, message } })
  }
  switch (msg.method) {
    case "item/tool/requestUserInput": {
      const decoded = decodeWith(RequestUserInputParams, msg.params)
      if (!decoded.ok) return refuse(`cannot read item/tool/requestUserInput: ${decoded.message}`)
      const params = decoded.value
      if (params.questions.length === 0) return refuse("item/tool/requestUserInput without questions")
      const requestId = requestIdFor(params.turnId, params.itemId)
      const prompt = promptFromRequest(params, promptIdFor(params.turnId, params.itemId))
      open(draft, {
        nativeId: msg.id,
        method: msg.method,
        requestId,
        turnId: params.turnId,
        itemId: params.itemId,
        prompt
      })
      draft.drafts.push(...questionOpened(withTurnItem(params), raw, requestId, prompt, native))
      return
    }
    case "item/commandExecution/requestApproval":
    case "item/fileChange/requestApproval": {
      const isCommand = msg.method === "item/commandExecution/requestApproval"
      const decoded = isCommand
        ? decodeWith(CommandApprovalParams, msg.params)
        : decodeWith(FileChangeApprovalParams, msg.params)
      if (!decoded.ok) return refuse(`cannot read ${msg.method}: ${decoded.message}`)
      const params: typeof CommandApprovalParams.Type = decoded.value
      // A command approval says what runs and where, structured (the card shows both).
      const { command, cwd } = params
      const requestId = requestIdFor(params.turnId, params.itemId, params.approvalId)
      const choices = choicesOf(params.availableDecisions ?? DEFAULT_DECISIONS)
      open(draft, {
        nativeId: msg.id,
        method: msg.method,
        requestId,
        turnId: params.turnId,
        itemId: params.itemId,
        choices
      })
      const title = isCommand ? (command ?? "Run a command") : "Apply file changes"
      push(draft, {
        type: "request.opened",
        ...withTurnItem(params),
        raw,
        payload: {
          requestId,
          requestKind: "approval",
          title,
          ...(params.reason ? { detail: params.reason } : {}),
          options: optionsOf(choices),
          native,
          ...(command == null ? {} : { command }),
          ...(cwd == null ? {} : { cwd })
        }
      })
      return
    }
    case ELICITATION_METHOD: {
      const decoded = decodeWith(ElicitationParams, msg.params)
      if (!decoded.ok) return refuse(`cannot read ${msg.method}: ${decoded.message}`, -32602)
      const params = decoded.value
      const turnId = params.turnId ?? draft.state.activeTurnId ?? ""
      // Keyed by the turn (or thread) and the JSON-RPC id: ids restart with each app-server.
      const key = `elicitation-${idKey(msg.id)}`
      const requestId = requestIdFor(turnId === "" ? params.threadId : turnId, key)
      if (isConfirmation(params)) {
        const choices = confirmationChoices.map((c) => ({
          optionId: c.option.id,
          decision: c.option.id,
          result: c.result
        }))
        open(draft, { nativeId: msg.id, method: msg.method, requestId, turnId, itemId: "", choices })
        const detail = confirmationDetail(params)
        push(draft, {
          type: "request.opened",
          ...withTurnItem({ turnId, itemId: "" }),
          raw,
          payload: {
            requestId,
            requestKind: "approval",
            title: params.message,
            ...(detail === undefined ? {} : { detail }),
            options: confirmationChoices.map((c) => c.option),
            native
          }
        })
        return
      }
      const elicitation = elicitationOf(params, promptIdFor(turnId === "" ? params.threadId : turnId, key))
      if (!elicitation.ok)
        return refuse(`${params.serverName}'s elicitation cannot be shown: ${elicitation.message}`, -32602)
      const { prompt } = elicitation.value
      open(draft, {
        nativeId: msg.id,
        method: msg.method,
        requestId,
        turnId,
        itemId: "",
        prompt,
        elicitation: elicitation.value
      })
      const at = withTurnItem({ turnId, itemId: "" })
      draft.drafts.push(...questionOpened(at, raw, requestId, prompt, native, { title: prompt.title }))
      return
    }
    case PERMISSIONS_METHOD: {
      const decoded = decodeWith(PermissionsApprovalParams, msg.params)
      if (!decoded.ok) return refuse(`cannot read ${msg.method}: ${decoded.message}`, -32602)
      const params = decoded.value
      const requestId = requestIdFor(params.turnId, params.itemId)
      const offered = permissionsChoices(params)
      const choices = offered.map((c) => ({ optionId: c.option.id, decision: c.option.id, result: c.result }))
      open(draft, { nativeId: msg.id, method: msg.method, requestId, ...withIds(params), choices })
      push(draft, {
        type: "request.opened",
        ...withTurnItem(params),
        raw,
        payload: {
          requestId,
          requestKind: "approval",
          title: "Grant more permissions",
          detail: permissionsDetail(params),
          options: offered.map((c) => c.option),
          native
        }
      })
      return
    }
    default:
      return refuse(`planbridge does not handle the server request ${msg.method}`)
  }
}

/** The client's JSON-RPC response to a server request: the answer leaves through here. */
export const mapClientResponse = (
  draft: Draft,
  msg: { readonly id: JsonRpcId; readonly result?: unknown; readonly error?: unknown }
): void => {
  const key = idKey(msg.id)
  const request = draft.state.serverRequests.get(key)
  if (request === undefined || request.answered) return
  const close = (patch: Partial<OpenServerRequest>) =>
    update(draft, { serverRequests: withAnswered(draft.state.serverRequests, key, patch) })
  if (request.prompt !== undefined && request.elicitation !== undefined) {
    const { prompt } = request
    const outcome =
      msg.error === undefined
        ? elicitationOutcome(request.elicitation, msg.result)
        : { resolution: "cancelled" as const, entries: [] }
    const payload =
      msg.error === undefined ? { id: msg.id, result: redactElicitationResponse(request.elicitation, msg.result) } : msg
    const raw = rawOf(CLIENT_RESPONSE, request.method, payload)
    const answers = redactAnswerEntries(prompt, outcome.entries)
    push(draft, promptResolved(withTurnItem(request), raw, prompt.promptId, outcome.resolution, answers))
    return close({})
  }
  if (request.prompt !== undefined) {
    const prompt = request.prompt
    const decoded = msg.error === undefined ? decodeWith(RequestUserInputResponse, msg.result) : undefined
    const response = decoded?.ok ? decoded.value : { answers: {} }
    const entries = entriesFromNativeAnswer(prompt, response)
    const payload = msg.error === undefined ? { id: msg.id, result: redactNativeAnswer(prompt, response) } : msg
    // An error response is how the session dismisses a question as cancelled.
    const resolution = msg.error !== undefined ? "cancelled" : entries.length > 0 ? "answered" : "empty"
    const raw = rawOf(CLIENT_RESPONSE, request.method, payload)
    const answers = redactAnswerEntries(prompt, entries)
    push(draft, promptResolved(withTurnItem(request), raw, prompt.promptId, resolution, answers))
    return close({})
  }
  const decoded = msg.error === undefined ? decodeWith(ApprovalResponse, msg.result) : undefined
  const sent = JSON.stringify(msg.result)
  const chosen = request.choices?.find((c) =>
    c.result !== undefined
      ? msg.error === undefined && JSON.stringify(c.result) === sent
      : decoded?.ok === true && JSON.stringify(c.decision) === JSON.stringify(decoded.value.decision)
  )
  close(chosen !== undefined ? { optionId: chosen.optionId } : {})
}

/** A client message as it may be recorded: the answer to a secret question redacted. */
export const redactTraffic = <T extends { readonly dir: string }>(
  entry: T,
  state: CodexMappingState | undefined
): T => {
  if (entry.dir !== "out" || state === undefined || !("msg" in entry)) return entry
  const msg = entry.msg
  if (typeof msg !== "object" || msg === null || !("id" in msg) || !("result" in msg)) return entry
  const request = state.serverRequests.get(idKey(msg.id as JsonRpcId))
  if (request?.prompt === undefined || !request.prompt.questions.some((q) => q.secret)) return entry
  if (request.elicitation !== undefined)
    return { ...entry, msg: { ...msg, result: redactElicitationResponse(request.elicitation, msg.result) } }
  const decoded = decodeWith(RequestUserInputResponse, msg.result)
  const result = decoded.ok ? redactNativeAnswer(request.prompt, decoded.value) : REDACTED
  return { ...entry, msg: { ...msg, result } }
}

/**
 * Ends one open request in the canonical stream: `responded` if our answer was recorded, else
 * `ending` (and its prompt with it).
 */
const end = (
  draft: Draft,
  request: OpenServerRequest,
  ending: "cancelled" | "provider_exited",
  raw: ReturnType<typeof rawOf>,
  reason: string
) => {
  const at = withTurnItem(request)
  if (request.prompt !== undefined && !request.answered)
    push(draft, promptResolved(at, raw, request.prompt.promptId, ending, [], reason))
  push(draft, requestResolved(at, raw, request.requestId, request.answered ? "responded" : ending, request.optionId))
  update(draft, { serverRequests: withClosed(draft.state.serverRequests, request.key) })
}

export const mapServerRequestResolved = (draft: Draft, params: unknown, raw: ReturnType<typeof rawOf>): void => {
  const decoded = decodeWith(ServerRequestResolved, params)
  if (!decoded.ok) return warning(draft, "codex.decode_failed", decoded.message, raw)
  const request = draft.state.serverRequests.get(idKey(decoded.value.requestId))
  // Already ended (its turn completed first, as 0.171.0 orders it): nothing left to say.
  if (request === undefined) return
  end(draft, request, "cancelled", raw, "resolved by the provider without an answer")
}

/**
 * A turn that ends takes its unanswered requests with it (the kernel's cancel rule): the provider
 * will not accept an answer any more (0.171.0 drops it silently), so the prompt is cancelled now,
 * not when a late `serverRequest/resolved` arrives.
 */
export const endRequestsOfTurn = (
  draft: Draft,
  turnId: string,
  status: string,
  raw: ReturnType<typeof rawOf>
): void => {
  for (const request of awaitingInTurn(draft.state.serverRequests, turnId))
    end(draft, request, "cancelled", raw, `turn ${status}`)
}

export const endAllRequests = (draft: Draft, raw: ReturnType<typeof rawOf>): void => {
  for (const request of draft.state.serverRequests.values())
    end(draft, request, "provider_exited", raw, "the provider process exited")
}
