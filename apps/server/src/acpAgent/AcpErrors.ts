import { RequestError } from "@agentclientprotocol/sdk/unstable"
import { PlanbridgeError } from "@planbridge/client"

/** JSON-RPC's "invalid params" and "internal error"; -32002 is ACP's "resource not found". */
const INVALID_PARAMS = -32602
const INTERNAL_ERROR = -32603
const NOT_FOUND = -32002

/** Planbridge codes that mean the editor named something this server does not have. */
const notFound = new Set(["unknown_thread", "unknown_prompt", "unknown_request", "unknown_provider"])
/** Planbridge codes that mean the editor asked for something wrong. */
const invalid = new Set(["invalid_frame", "invalid_answer", "unsupported", "invalid_cursor"])

/**
 * A failure as an ACP error: Planbridge's own code (and the path into the command, when it has
 * one) in `data.planbridge`, so an editor can tell `busy` from `auth_required` without reading
 * the message. Anything that is not a Planbridge error is an internal error with its message.
 */
export const toRequestError = (error: unknown): RequestError => {
  if (error instanceof RequestError) return error
  if (error instanceof PlanbridgeError) {
    const code = notFound.has(error.code) ? NOT_FOUND : invalid.has(error.code) ? INVALID_PARAMS : INTERNAL_ERROR
    const data = { planbridge: { code: error.code, ...(error.path === undefined ? {} : { path: error.path }) } }
    return new RequestError(code, error.message, data)
  }
  return new RequestError(INTERNAL_ERROR, error instanceof Error ? error.message : String(error))
}

/** A session id the agent does not know (never opened, loaded or resumed on this connection). */
export const unknownSession = (sessionId: string): RequestError =>
  new RequestError(NOT_FOUND, `no session '${sessionId}' on this connection: use session/load or session/resume`, {
    planbridge: { code: "unknown_thread" }
  })

/** Runs `f`, turning whatever it throws into an ACP error. */
export const asAcp = async <T>(f: () => Promise<T>): Promise<T> => {
  try {
    return await f()
  } catch (error) {
    throw toRequestError(error)
  }
}
