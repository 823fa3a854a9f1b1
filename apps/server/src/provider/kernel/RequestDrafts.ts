import type {
  ItemId,
  OptionId,
  PlanId,
  PromptId,
  PromptResolutionKind,
  RawNative,
  RequestId,
  RequestOption,
  RequestResolution,
  TurnId,
  UserInputAnswerEntry,
  UserInputPrompt
} from "@planbridge/contracts"
import { definedFields } from "../../util/definedFields.ts"
import type { EventDraft } from "./EventDraft.ts"
import type { OpenRequest, OpenRequests } from "./OpenRequests.ts"

/**
 * The canonical events of a native request's life, the same for every provider: a question
 * opened (`request.opened`, then `user-input.requested`), an approval or plan review opened with
 * its options, its prompt resolved, the request resolved. `at` places them: the request's turn
 * (ACP's may have none) and, where the provider has one, its item. A question's title is its
 * first question's, unless the provider has its own.
 */
export interface RequestPlace {
  readonly turnId?: TurnId
  readonly itemId?: ItemId
}

export const questionOpened = (
  at: RequestPlace,
  raw: RawNative,
  requestId: RequestId,
  prompt: UserInputPrompt,
  native: { readonly method: string; readonly id: string | number },
  titled: { readonly title?: string | undefined } = { title: prompt.questions[0].header ?? prompt.questions[0].label }
): ReadonlyArray<EventDraft> => {
  const opened = {
    requestId,
    requestKind: "user_input",
    ...definedFields({ title: titled.title }),
    options: [],
    native,
    promptId: prompt.promptId
  } as const
  return [
    { type: "request.opened", ...at, raw, payload: opened },
    { type: "user-input.requested", ...at, raw, payload: { prompt, requestId } }
  ]
}

/** What an approval or plan review shows: the options a person chooses from, and what it is about. */
export type ApprovalCard = {
  readonly requestKind: "approval" | "plan_approval"
  readonly title?: string | undefined
  readonly detail?: string | undefined
  readonly options: ReadonlyArray<RequestOption>
  readonly planId?: PlanId | undefined
  /** A command approval's command and working directory, structured. */
  readonly command?: string | undefined
  readonly cwd?: string | undefined
}

export const approvalOpened = (
  at: RequestPlace,
  raw: RawNative,
  requestId: RequestId,
  native: { readonly method: string; readonly id: string | number },
  card: ApprovalCard
): EventDraft => ({ type: "request.opened", ...at, raw, payload: { requestId, ...definedFields(card), native } })

export const promptResolved = (
  at: RequestPlace,
  raw: RawNative,
  promptId: PromptId,
  resolution: PromptResolutionKind,
  answers: ReadonlyArray<UserInputAnswerEntry>,
  reason?: string
): EventDraft => ({
  type: "user-input.resolved",
  ...at,
  raw,
  payload: { promptId, resolution, answers, ...definedFields({ reason }) }
})

export const requestResolved = (
  at: RequestPlace,
  raw: RawNative,
  requestId: RequestId,
  resolution: RequestResolution,
  optionId?: OptionId
): EventDraft => ({
  type: "request.resolved",
  ...at,
  raw,
  payload: { requestId, resolution, ...definedFields({ optionId }) }
})

/**
 * The events that end a request: its prompt's, if it asked one (`resolution`, with the answers
 * given or why none), then its own (`responded` when answered, even empty), unless our answer
 * resolved it already (an opened URL page: its prompt stays open until the flow there completes).
 */
export const requestEnd = (
  at: RequestPlace,
  raw: RawNative,
  request: OpenRequest,
  resolution: "answered" | "empty" | "cancelled" | "provider_exited",
  answers: ReadonlyArray<UserInputAnswerEntry> = [],
  reason?: string
): ReadonlyArray<EventDraft> => {
  const { prompt, answered, requestId } = request
  const responded = resolution === "answered" || resolution === "empty"
  return [
    ...(prompt === undefined ? [] : [promptResolved(at, raw, prompt.promptId, resolution, answers, reason)]),
    ...(answered ? [] : [requestResolved(at, raw, requestId, responded ? "responded" : resolution)])
  ]
}

/** The open request whose URL flow (an elicitation's `elicitationId`) this is, if it is still open. */
export const urlFlow = <R extends OpenRequest>(requests: OpenRequests<R>, elicitationId: string): R | undefined =>
  [...requests.values()].find((r) => r.prompt?.url?.elicitationId === elicitationId)
