import type { OperatingMode, PlanId, PromptId, RequestId, UserInputPrompt } from "@planbridge/contracts"
import { Effect } from "effect"
import { AdapterError, adapterError } from "../ProviderAdapter.ts"
import { withEntry, withoutEntry } from "./immutable.ts"

/**
 * The native requests a session holds open — questions, approvals, plan decisions — and the
 * rules about them, the same for every provider. Pure and immutable: a mapping keeps them in its
 * state and replaces them in `step`, so a replay reconstructs them line by line.
 *
 * - pending: a request is open from the line that asks it until it is ended; it awaits us until
 *   our answer is recorded (`answered`), after which it may stay open until the provider confirms;
 * - not pending: an answer, dismissal or decision for a prompt, request or plan that is not
 *   awaiting us (answered already, cancelled, ended with its turn, never asked) is refused with
 *   the one reason and wording;
 * - busy: a new turn while a blocking question awaits us (it would be lost as steering input), or
 *   while a turn runs where the provider cannot steer; a mode switch while a turn runs;
 * - cancel: a turn that ends cancels what it still awaits (`awaitingInTurn`);
 * - supersede: no provider overwrites a request (Codex asks parallel questions separately, Claude
 *   runs parallel callbacks concurrently); a request announced again under an open or answered
 *   key is the same request (`isKnown`), never a replacement.
 */

/** What every provider's open native request carries; each provider adds its own native facts. */
export interface OpenRequest {
  /** The native id as a map key (a JSON-RPC id key, a tool-use id): the answer goes to it. */
  readonly key: string
  readonly kind: "prompt" | "approval" | "plan"
  readonly requestId: RequestId
  readonly promptId?: PromptId | undefined
  /** A question's prompt, as it was opened (its `promptId`): what ends it resolves. */
  readonly prompt?: UserInputPrompt | undefined
  readonly planId?: PlanId | undefined
  /** The turn that asked it; it is cancelled when that turn ends. */
  readonly turnId: string | undefined
  /** A question the turn cannot go on without: a new turn is refused while it awaits us. */
  readonly blocking: boolean
  /** Our answer is recorded; the request awaits the provider, not us. */
  readonly answered: boolean
}

export type OpenRequests<R extends OpenRequest> = ReadonlyMap<string, R>

export const noOpenRequests = <R extends OpenRequest>(): OpenRequests<R> => new Map()

export const withOpened = <R extends OpenRequest>(requests: OpenRequests<R>, request: R): OpenRequests<R> =>
  withEntry(requests, request.key, request)

/** The request at `key` marked answered (with the provider's own facts of the answer, `patch`). */
export const withAnswered = <R extends OpenRequest>(
  requests: OpenRequests<R>,
  key: string,
  patch: Partial<R> = {}
): OpenRequests<R> => {
  const request = requests.get(key)
  return request === undefined ? requests : withEntry(requests, key, { ...request, ...patch, answered: true })
}

export const withClosed = <R extends OpenRequest>(requests: OpenRequests<R>, key: string): OpenRequests<R> =>
  withoutEntry(requests, key)

/** A request announced again (its key open or answered) is the same request: not superseded. */
export const isKnown = (requests: OpenRequests<OpenRequest>, key: string): boolean => requests.has(key)

export const promptNotPending = (promptId: string): AdapterError =>
  adapterError("prompt_not_pending", `prompt ${promptId} is not pending`)

export const requestNotPending = (requestId: string): AdapterError =>
  adapterError("request_not_pending", `request ${requestId} is not pending`)

export const planNotPending = (planId: string): AdapterError =>
  adapterError("request_not_pending", `plan ${planId} is not awaiting a decision`)

const requirePending = <A>(found: A | undefined, refusal: AdapterError): Effect.Effect<A, AdapterError> =>
  found === undefined ? Effect.fail(refusal) : Effect.succeed(found)

/** The first request still awaiting us that `match` picks, of the type `match` proves it is. */
const awaiting = <R extends OpenRequest, Found extends R>(
  requests: OpenRequests<R>,
  match: (r: R) => r is Found
): Found | undefined => [...requests.values()].find((r): r is Found => !r.answered && match(r))

/** A question, as every provider opens one: with its prompt. */
export type OpenQuestion<R extends OpenRequest> = R & { readonly kind: "prompt"; readonly prompt: UserInputPrompt }
export type OpenPlanReview<R extends OpenRequest> = R & { readonly kind: "plan" }

export const openPrompt = <R extends OpenRequest>(requests: OpenRequests<R>, promptId: PromptId) =>
  awaiting(
    requests,
    (r): r is OpenQuestion<R> => r.kind === "prompt" && r.prompt !== undefined && r.promptId === promptId
  )

export const openRequest = <R extends OpenRequest>(requests: OpenRequests<R>, requestId: RequestId): R | undefined =>
  awaiting(requests, (r): r is R => r.requestId === requestId)

export const openPlan = <R extends OpenRequest>(requests: OpenRequests<R>, planId: PlanId) =>
  awaiting(requests, (r): r is OpenPlanReview<R> => r.kind === "plan" && r.planId === planId)

/** The prompt awaiting an answer, or the one `prompt_not_pending` refusal. */
export const pendingPrompt = <R extends OpenRequest>(requests: OpenRequests<R>, promptId: PromptId) =>
  requirePending(openPrompt(requests, promptId), promptNotPending(promptId))

export const pendingRequest = <R extends OpenRequest>(requests: OpenRequests<R>, requestId: RequestId) =>
  requirePending(openRequest(requests, requestId), requestNotPending(requestId))

export const pendingPlan = <R extends OpenRequest>(requests: OpenRequests<R>, planId: PlanId) =>
  requirePending(openPlan(requests, planId), planNotPending(planId))

/**
 * Re-checked under the session's lock just before an answer is recorded (the turn may have ended
 * since it was looked up): the refusal in the request's own terms, or `undefined` while it awaits.
 */
export const stillAwaiting = (requests: OpenRequests<OpenRequest>, request: OpenRequest): AdapterError | undefined => {
  const current = requests.get(request.key)
  if (current !== undefined && !current.answered) return undefined
  if (request.kind === "prompt" && request.promptId !== undefined) return promptNotPending(request.promptId)
  if (request.kind === "plan" && request.planId !== undefined) return planNotPending(request.planId)
  return requestNotPending(request.requestId)
}

export const blockingPrompt = <R extends OpenRequest>(requests: OpenRequests<R>): R | undefined =>
  awaiting(requests, (r): r is R => r.kind === "prompt" && r.blocking)

/** What a turn that ends cancels: the requests it asked that still await us. */
export const awaitingInTurn = <R extends OpenRequest>(requests: OpenRequests<R>, turnId: string): ReadonlyArray<R> =>
  [...requests.values()].filter((r) => r.turnId === turnId && !r.answered)

const busy = (message: string) => adapterError("busy", message)

/**
 * A new turn: refused while a blocking question awaits us, and — for a provider that cannot take
 * text into a running turn as steering input (`steers: false`) — while a turn runs.
 */
export const turnStartRefusal = (
  requests: OpenRequests<OpenRequest>,
  runningTurn: string | undefined,
  steers: boolean
): AdapterError | undefined => {
  const blocking = blockingPrompt(requests)
  if (blocking !== undefined)
    return busy(`a blocking question (${blocking.promptId}) is pending; answer or dismiss it first`)
  if (!steers && runningTurn !== undefined) return busy(`turn ${runningTurn} is already running`)
  return undefined
}

/**
 * A mode switch while a turn runs would be recorded (and published) as the mode in effect while
 * the turn goes on in its old one: refused until it ends. `runningTurn` is `"(starting)"` while
 * the turn's start is sent and not yet answered.
 */
export const modeSwitchRefusal = (
  runningTurn: string | undefined,
  current: OperatingMode,
  next: OperatingMode
): AdapterError | undefined =>
  current === next || runningTurn === undefined
    ? undefined
    : busy(`turn ${runningTurn} is running in '${current}' mode; switch after it ends`)
