import type { AdapterError } from "../provider/ProviderAdapter.ts"
import { alreadyResolved, commandError, type CommandError } from "./CommandErrors.ts"

/** An adapter's refusal of a command on a live session, in the protocol's terms. */
export const adapterToCommand = (error: AdapterError): CommandError => {
  switch (error.reason) {
    case "prompt_not_pending":
    case "request_not_pending":
      return alreadyResolved()
    case "invalid_answer":
      return commandError("invalid_answer", error.message)
    case "unsupported":
      return commandError("unsupported", error.message)
    case "busy":
      return commandError("busy", error.message)
    case "provider_exited":
      return commandError("session_not_live", error.message)
    default:
      return commandError("provider_error", `${error.reason}: ${error.message}`)
  }
}
