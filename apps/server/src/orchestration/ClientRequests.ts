import { Effect } from "effect"
import { createHash } from "node:crypto"
import type { ClientRequestStore, ResolutionOutcome } from "../persistence/ClientRequestStore.ts"
import type { StoreError } from "../persistence/StoreError.ts"
import { commandError, type CommandError } from "./CommandErrors.ts"

export type { ResolutionOutcome } from "../persistence/ClientRequestStore.ts"

/**
 * What a `clientRequestId` was first used for, and its outcome. A retry of the identical
 * command gets the first outcome again; the same id on anything else (another prompt, another
 * answer, another command) is refused `client_request_conflict`, because handing it the first
 * outcome would tell the client its new answer was delivered when it never was.
 */

export type AnswerCommandType = "userInput.respond" | "userInput.dismiss" | "request.respond" | "plan.decide"

/** One answer-like command as the idempotency store sees it. */
export interface ClientRequest {
  readonly clientRequestId: string
  readonly command: AnswerCommandType
  /** The prompt, request or plan id it is for. */
  readonly target: string
  /** Everything else it carries (answers, option, decision, …); only its hash is stored. */
  readonly payload: unknown
}

/** Object keys sorted at every level, undefined members dropped (as JSON does): equal commands, equal text. */
const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical)
  if (typeof value !== "object" || value === null) return value
  const record = value as Readonly<Record<string, unknown>>
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .flatMap((key) => (record[key] === undefined ? [] : [[key, canonical(record[key])]]))
  )
}

/**
 * SHA-256 of the canonical command, salted with its client request id so that equal answers
 * under different ids hash differently. A secret answer is in the hash, never in clear.
 */
export const fingerprintOf = (request: ClientRequest): string => {
  const { command, target, payload } = request
  return createHash("sha256")
    .update(`${request.clientRequestId}\n`)
    .update(JSON.stringify(canonical({ command, target, payload })))
    .digest("hex")
}

const targetsOf = (outcome: ResolutionOutcome) => [outcome.promptId, outcome.requestId, outcome.planId]

const conflict = (request: ClientRequest, firstUse: string) =>
  commandError(
    "client_request_conflict",
    `clientRequestId '${request.clientRequestId}' was already used for ${firstUse}; ` +
      "use a new clientRequestId for a new answer, and reuse one only to retry the identical command"
  )

/**
 * The first outcome of `request`'s id when `request` repeats the command it was first used for,
 * `undefined` when the id is new, and `client_request_conflict` (naming the first use) otherwise.
 */
export const recallOutcome = (
  store: ClientRequestStore["Service"],
  request: ClientRequest
): Effect.Effect<ResolutionOutcome | undefined, CommandError | StoreError> =>
  Effect.flatMap(store.find(request.clientRequestId), (stored) => {
    if (stored === undefined) return Effect.succeed(undefined)
    const { outcome, command, target, fingerprint } = stored
    if (fingerprint === null || command === null || target === null) {
      // Stored before fingerprints existed: only the id its outcome names is known.
      if (targetsOf(outcome).includes(request.target)) return Effect.succeed(outcome)
      const first = targetsOf(outcome).find((id) => id !== undefined) ?? "?"
      return Effect.fail(conflict(request, `an answer on '${first}'`))
    }
    if (fingerprint === fingerprintOf(request)) return Effect.succeed(outcome)
    const same = command === request.command && target === request.target
    return Effect.fail(conflict(request, `${command} on '${target}'${same ? " with other content" : ""}`))
  })

/** Stores the outcome of `request`'s first successful run (a failed run is not remembered). */
export const rememberOutcome = (
  store: ClientRequestStore["Service"],
  request: ClientRequest,
  outcome: ResolutionOutcome
): Effect.Effect<ResolutionOutcome, StoreError> => {
  const { clientRequestId, command, target } = request
  const fingerprint = fingerprintOf(request)
  return Effect.as(store.insert({ clientRequestId, outcome, command, target, fingerprint }), outcome)
}
