import type { ErrorCode, ErrorInfo } from "@planbridge/contracts"
import { Cause } from "effect"
import { ALREADY_RESOLVED_MESSAGE, CommandError } from "../orchestration/CommandErrors.ts"
import { StoreError, type StoreErrorReason } from "../persistence/StoreError.ts"
import type { AdapterError } from "../provider/AdapterError.ts"
import { definedFields } from "../util/definedFields.ts"

/** How a failure is told to a client, over WebSocket (`error` frames) and HTTP (`{error}` bodies) alike. */
export interface WireFailure {
  readonly error: ErrorInfo
  /**
   * Set when the failure is the server's or its provider's, not the client's: the whole cause
   * (every error it holds, each with the `cause` it keeps), for the log and never the wire.
   */
  readonly unexpected?: string
}

/** An adapter's refusal or failure, in the protocol's terms. */
const adapterInfo = (error: AdapterError): ErrorInfo => {
  switch (error.reason._tag) {
    case "PromptNotPending":
    case "RequestNotPending":
      return { code: "already_resolved", message: ALREADY_RESOLVED_MESSAGE }
    case "InvalidAnswer":
      return { code: "invalid_answer", message: error.message }
    case "Unsupported":
      return { code: "unsupported", message: error.message }
    case "Busy":
      return { code: "busy", message: error.message }
    case "ProviderExited":
      return { code: "session_not_live", message: error.message }
    default:
      return { code: "provider_error", message: `${error.kind}: ${error.message}` }
  }
}

/** A relayed command without a reply (persistence/StoreError.ts's relay reasons), in the protocol's terms. */
const relayInfo = (reason: StoreErrorReason): ErrorInfo => {
  switch (reason._tag) {
    case "RelayUnreachable":
      return {
        code: "session_not_live",
        message: `the replica that owns thread ${reason.threadId} did not take the command within ${reason.boundMs} ms; it was withdrawn and did not run`
      }
    case "RelayLost":
      return {
        code: "session_not_live",
        message: `the replica that owned thread ${reason.threadId} lost its lease while running the command; whether it ran is unknown`
      }
    case "RelayTokenMismatch":
      return {
        code: "session_not_live",
        message:
          "the replica that owns the thread could not open the command: every replica of a deployment must run with the same --token"
      }
    default:
      return { code: "internal", message: "the command failed unexpectedly; the server logged it" }
  }
}

/** A command error's code, message and path as a client gets them: made from its reason. */
export const errorInfoOf = (error: CommandError): ErrorInfo => {
  const { reason } = error
  if (reason._tag === "ProviderRefused") return adapterInfo(reason.cause)
  if (reason._tag === "RelayFailed") return relayInfo(reason.cause.reason)
  return { code: reason.code, message: reason.message, ...definedFields({ path: reason.path }) }
}

/** Codes that say the server or its provider failed (not the client): their whole cause is logged. */
const serverSide: ReadonlySet<ErrorCode> = new Set<ErrorCode>(["provider_error", "resume_failed", "internal"])

/**
 * The one place a failure becomes wire text. A command error is told with its code, message and
 * path (made from its reason), an unknown prompt as `unknown_prompt`; anything else (a failed
 * store, a defect) is `internal`, with a message that reveals nothing of it. Where the failure
 * is the server's, the whole `Cause` is handed back for the log (`unexpected`): `Cause.pretty`
 * follows each error's `cause` (every umbrella's is its reason, every reason's what failed
 * below it), so the driver's own error under a refused command is in the log. `subject` names
 * what failed in that message: a WebSocket `command`, an HTTP `request`.
 */
export const wireFailureOf = (cause: Cause.Cause<unknown>, subject: "command" | "request"): WireFailure => {
  const failure = Cause.findErrorOption(cause)
  if (failure._tag === "Some" && failure.value instanceof CommandError) {
    const error = errorInfoOf(failure.value)
    return serverSide.has(error.code) ? { error, unexpected: Cause.pretty(cause) } : { error }
  }
  if (
    failure._tag === "Some" &&
    failure.value instanceof StoreError &&
    failure.value.reason._tag === "PromptNotFound"
  ) {
    return { error: { code: "unknown_prompt", message: failure.value.reason.message } }
  }
  const message = `the ${subject} failed unexpectedly; the server logged it`
  return { error: { code: "internal", message }, unexpected: Cause.pretty(cause) }
}
