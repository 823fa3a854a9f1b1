import type { ErrorCode, ErrorInfo } from "@planbridge/contracts"
import { Cause } from "effect"
import { CommandError } from "../orchestration/CommandErrors.ts"
import { PromptNotFound } from "../persistence/OperatorQueries.ts"
import { definedFields } from "../util/definedFields.ts"

/** How a failure is told to a client, over WebSocket (`error` frames) and HTTP (`{error}` bodies) alike. */
export interface WireFailure {
  readonly error: ErrorInfo
  /** Set when the failure is the server's, not the client's: the whole cause, for the log and never the wire. */
  readonly unexpected?: string
}

/**
 * A refused command is told with its code, message and path, an unknown prompt as
 * `unknown_prompt`; anything else (a failed store, a defect) is `internal`, with a message that
 * reveals nothing of it. `subject` names what failed in that message: a WebSocket `command`, an
 * HTTP `request`.
 */
export const wireFailureOf = (cause: Cause.Cause<unknown>, subject: "command" | "request"): WireFailure => {
  const failure = Cause.findErrorOption(cause)
  if (failure._tag === "Some" && failure.value instanceof CommandError) {
    const { code, message, path } = failure.value
    // CommandErrors are built by `commandError` from an ErrorCode.
    return { error: { code: code as ErrorCode, message, ...definedFields({ path }) } }
  }
  if (failure._tag === "Some" && failure.value instanceof PromptNotFound) {
    return { error: { code: "unknown_prompt", message: failure.value.message } }
  }
  const message = `the ${subject} failed unexpectedly; the server logged it`
  return { error: { code: "internal", message }, unexpected: Cause.pretty(cause) }
}
