import { inspect } from "node:util"

/**
 * A cause's own words, for a message a person reads: an `Error`'s message (or any object's
 * string `message`), a string as it is, anything else inspected. The one place a kept `cause`
 * is turned into text; the cause object itself stays on the error (and the whole `Cause` is
 * logged where it reaches the wire: server/WireErrors.ts). Never throws: `String()` does on an
 * object without a prototype (drivers build rows so), and an error's message getter that threw
 * would hide the failure it describes.
 */
export const describeCause = (cause: unknown): string => {
  if (cause instanceof Error) return cause.message
  if (typeof cause === "string") return cause
  if (typeof cause === "object" && cause !== null && "message" in cause && typeof cause.message === "string")
    return cause.message
  return inspect(cause, { depth: 2, breakLength: Infinity })
}
