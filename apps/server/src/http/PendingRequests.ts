import type { RequestOption, ThreadSnapshot } from "@planbridge/contracts"

/**
 * An approval or a plan decision waiting for a person, as the operator API lists it
 * (`GET /api/requests`): what the request asks (`title`, `detail`), the provider's own options,
 * and for a plan approval the plan and what a decision may carry beyond approve / reject.
 * Questions are prompts (`GET /api/prompts`), not listed here.
 */
export interface PendingRequest {
  readonly requestId: string
  readonly threadId: string
  readonly provider: string
  readonly turnId: string | null
  readonly kind: string
  readonly title: string | null
  readonly detail: string | null
  readonly options: ReadonlyArray<RequestOption>
  readonly plan: {
    readonly planId: string
    readonly markdown: string
    readonly supportsEdits: boolean
    readonly supportsFeedback: boolean
  } | null
  readonly createdAt: string
}

/** A thread's pending requests that carry no question, oldest first. */
export const pendingRequestsOf = (thread: ThreadSnapshot): ReadonlyArray<PendingRequest> =>
  thread.requests
    .filter((r) => r.status === "pending" && r.promptId === null)
    .map((r) => {
      const plan = r.planId === null ? undefined : thread.proposedPlans.find((p) => p.planId === r.planId)
      return {
        requestId: r.requestId,
        threadId: thread.threadId,
        provider: thread.provider,
        turnId: r.turnId,
        kind: r.kind,
        title: r.title,
        detail: r.detail,
        options: r.options,
        plan:
          plan === undefined
            ? null
            : {
                planId: plan.planId,
                markdown: plan.editedMarkdown ?? plan.markdown ?? plan.streamedText,
                supportsEdits: thread.capabilities?.supportsPlanEdits === true,
                supportsFeedback: thread.capabilities?.supportsPlanFeedback === true
              },
        createdAt: r.createdAt
      }
    })
