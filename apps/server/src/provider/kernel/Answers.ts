import type { OptionId, PromptId, RequestId } from "@planbridge/contracts"
import { Effect } from "effect"
import { AdapterError } from "../AdapterError.ts"
import type { PlanDecisionInput } from "../ProviderAdapter.ts"
import type { CheckedAnswer } from "./CheckedAnswer.ts"
import { pendingPlan, pendingPrompt, pendingRequest } from "./OpenRequests.ts"
import type { OpenPlanReview, OpenQuestion, OpenRequest, OpenRequests } from "./OpenRequests.ts"

/**
 * A person's answer to a native request, the same for every provider: the open request it is for
 * is found (or refused with the one not-pending reason, `OpenRequests.ts`), the provider builds
 * its native reply from it (or refuses in its own terms), and the session sends that reply
 * (`Session.answer`: recorded before it is written, refused if the request stopped awaiting us).
 */

/** What a provider replies to its open request `R` for each answer, or its refusal. */
export interface NativeReplies<R extends OpenRequest, Reply> {
  readonly answer: (request: OpenQuestion<R>, checked: CheckedAnswer) => Reply | AdapterError
  readonly dismiss: (request: OpenQuestion<R>, resolution: "empty" | "cancelled") => Reply | AdapterError
  readonly choose: (request: R, optionId: OptionId) => Reply | AdapterError
  /** A provider that opens no plan requests gives its refusal instead, made before any lookup. */
  readonly decidePlan:
    ((request: OpenPlanReview<R>, decision: PlanDecisionInput) => Reply | AdapterError) | AdapterError
}

/** A session's four answer entry points (`ProviderSession`), on its open requests and its `send`. */
export const makeAnswers = <R extends OpenRequest, Reply>(
  open: Effect.Effect<OpenRequests<R>>,
  send: (request: R, reply: Reply) => Effect.Effect<void, AdapterError>,
  replies: NativeReplies<R, Reply>
) => {
  const answerWith = <Id, Found extends R>(
    pending: (requests: OpenRequests<R>, id: Id) => Effect.Effect<Found, AdapterError>,
    id: Id,
    reply: (request: Found) => Reply | AdapterError
  ) =>
    Effect.gen(function* () {
      const request = yield* pending(yield* open, id)
      const built = reply(request)
      if (built instanceof AdapterError) return yield* Effect.fail(built)
      yield* send(request, built)
    })
  const { decidePlan } = replies
  return {
    respondToUserInput: (checked: CheckedAnswer) =>
      answerWith(pendingPrompt, checked.answer.promptId, (request) => replies.answer(request, checked)),
    dismissUserInput: (promptId: PromptId, resolution: "empty" | "cancelled") =>
      answerWith(pendingPrompt, promptId, (request) => replies.dismiss(request, resolution)),
    respondToRequest: (requestId: RequestId, optionId: OptionId) =>
      answerWith(pendingRequest, requestId, (request) => replies.choose(request, optionId)),
    decidePlan: (decision: PlanDecisionInput) =>
      decidePlan instanceof AdapterError
        ? Effect.fail(decidePlan)
        : answerWith(pendingPlan, decision.planId, (request) => decidePlan(request, decision))
  }
}
