import type {
  OptionId,
  PlanId,
  RawNative,
  RequestResolution,
  ThreadId,
  TurnId,
  UserInputPrompt
} from "@planbridge/contracts"
import type { PermissionResult } from "./ClaudeNative.ts"
import { entriesFromNativeAnswers } from "./ClaudePrompts.ts"
import type { Decision } from "./ClaudeTranscript.ts"
import { definedFields } from "../../util/definedFields.ts"
import type { EventDraft } from "../kernel/EventDraft.ts"
import type { OpenRequest } from "../kernel/OpenRequests.ts"
import { promptIdOf, requestIdOf } from "../kernel/ids.ts"
import type { FormField } from "../kernel/ElicitationForm.ts"
import { approvalOpened, questionOpened, requestEnd, requestResolved } from "../kernel/RequestDrafts.ts"

/**
 * A native request waiting on us (kernel `OpenRequests.ts`): a `canUseTool` call that we have
 * seen, or an AskUserQuestion / ExitPlanMode tool use whose call is about to come. Keyed by
 * tool-use id (`key`), never by turn.
 */
export interface ClaudeRequest extends OpenRequest {
  readonly toolName: string
  readonly turnId: TurnId
  readonly planMarkdown?: string | undefined
  /** An MCP elicitation's form fields (`onElicitation`), for its answer. */
  readonly elicitationFields?: ReadonlyArray<FormField> | undefined
}

/** A tool use's canonical ids (`kernel/ids.ts`): tool-use ids are unique, so the thread is their scope. */
export const requestIds = (threadId: ThreadId, toolUseID: string) => ({
  requestId: requestIdOf(threadId, toolUseID),
  promptId: promptIdOf(threadId, toolUseID),
  planId: `${threadId}/plan/${toolUseID}` as PlanId
})

/** The native request a Claude request's events name: the `canUseTool` call of its tool use. */
const nativeOf = (request: ClaudeRequest) => ({
  method: request.toolName === "onElicitation" ? "onElicitation" : "canUseTool",
  id: request.key
})

export const questionOpenedDrafts = (request: ClaudeRequest, prompt: UserInputPrompt, raw: RawNative) =>
  questionOpened({ turnId: request.turnId }, raw, request.requestId, prompt, nativeOf(request))

export const planOpened = (
  request: ClaudeRequest,
  planId: PlanId,
  markdown: string,
  filePath: string | undefined,
  raw: RawNative
): ReadonlyArray<EventDraft> => [
  {
    type: "plan.proposed.completed",
    turnId: request.turnId,
    raw,
    payload: { planId, markdown, ...definedFields({ filePath }) }
  },
  approvalOpened({ turnId: request.turnId }, raw, request.requestId, nativeOf(request), {
    requestKind: "plan_approval",
    title: "Approve the plan?",
    options: [
      { id: "approve" as OptionId, label: "Approve", kind: "allow_once" },
      { id: "reject" as OptionId, label: "Keep planning", kind: "reject_once" }
    ],
    planId
  })
]

export const toolApprovalOpened = (request: ClaudeRequest, input: unknown, raw: RawNative): EventDraft =>
  approvalOpened({ turnId: request.turnId }, raw, request.requestId, nativeOf(request), {
    requestKind: "approval",
    title: `Allow ${request.toolName}?`,
    detail: JSON.stringify(input),
    options: [
      { id: "allow" as OptionId, label: "Allow", kind: "allow_once" },
      { id: "deny" as OptionId, label: "Deny", kind: "reject_once" }
    ]
  })

export type Outcome = Decision | { readonly kind: "exited" }

/** The events that close a request, for our decision or the process exit. */
export const requestEnded = (request: ClaudeRequest, outcome: Outcome, raw: RawNative): ReadonlyArray<EventDraft> => {
  const at = { turnId: request.turnId }
  const closed = (resolution: RequestResolution, optionId?: string) =>
    requestResolved(at, raw, request.requestId, resolution, optionId as OptionId | undefined)
  switch (outcome.kind) {
    case "exited":
      return requestEnd(at, raw, request, "provider_exited")
    case "prompt":
      return requestEnd(at, raw, request, outcome.resolution, outcome.answers, outcome.reason)
    case "plan": {
      if (outcome.decision === "cancelled" || request.planId === undefined) return [closed("cancelled")]
      return [
        {
          type: "plan.decision",
          turnId: request.turnId,
          raw,
          payload: {
            planId: request.planId,
            decision: outcome.decision,
            ...definedFields({ feedback: outcome.feedback, editedMarkdown: outcome.editedMarkdown })
          }
        },
        closed("responded", outcome.decision === "rejected" ? "reject" : "approve")
      ]
    }
    case "approval":
      return outcome.optionId === "cancelled" ? [closed("cancelled")] : [closed("responded", outcome.optionId)]
  }
}

/** How a request ends when nobody answered it (interrupt, end of turn). */
export const cancelDecision = (request: ClaudeRequest, reason: string): Decision =>
  request.kind === "prompt"
    ? { kind: "prompt", resolution: "cancelled", answers: [], reason }
    : request.kind === "plan"
      ? { kind: "plan", decision: "cancelled" }
      : { kind: "approval", optionId: "cancelled" }

/**
 * Our decision, read back from what the callback returned (for recordings that hold only the
 * native result): answers by label, an allow without answers is `empty`, a denied question was
 * cancelled, a denied plan rejected with the message as feedback, a changed plan an edit.
 */
export const decisionFromResult = (request: ClaudeRequest, result: PermissionResult): Decision => {
  if (request.kind === "prompt") {
    if (result.behavior === "deny") return { kind: "prompt", resolution: "cancelled", answers: [] }
    const answers = result.updatedInput?.["answers"]
    const entries =
      typeof answers === "object" && answers !== null && request.prompt !== undefined
        ? entriesFromNativeAnswers(
            request.prompt,
            answers as Record<string, unknown>,
            result.updatedInput?.["annotations"]
          )
        : []
    return { kind: "prompt", resolution: entries.length > 0 ? "answered" : "empty", answers: entries }
  }
  if (request.kind === "plan") {
    if (result.behavior === "deny") return { kind: "plan", decision: "rejected", feedback: result.message }
    const plan = result.updatedInput?.["plan"]
    return typeof plan === "string" && plan !== request.planMarkdown
      ? { kind: "plan", decision: "edited", editedMarkdown: plan }
      : { kind: "plan", decision: "approved" }
  }
  return { kind: "approval", optionId: result.behavior === "allow" ? "allow" : "deny" }
}
