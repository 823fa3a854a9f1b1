import { Effect } from "effect"
import { AdapterError } from "../ProviderAdapter.ts"

/**
 * The answer paths' "not pending" rules, the same for every provider: an answer, a dismissal or
 * a decision for a prompt, request or plan that is not open in the session (answered already,
 * cancelled, ended with its turn, or never asked) is refused with the one reason and wording.
 */

export const promptNotPending = (promptId: string): AdapterError =>
  new AdapterError({ reason: "prompt_not_pending", message: `prompt ${promptId} is not pending` })

export const requestNotPending = (requestId: string): AdapterError =>
  new AdapterError({ reason: "request_not_pending", message: `request ${requestId} is not pending` })

export const planNotPending = (planId: string): AdapterError =>
  new AdapterError({ reason: "request_not_pending", message: `plan ${planId} is not awaiting a decision` })

/** The open request that was found, or `refusal` when there is none. */
export const requirePending = <A>(found: A | undefined, refusal: AdapterError): Effect.Effect<A, AdapterError> =>
  found === undefined ? Effect.fail(refusal) : Effect.succeed(found)
