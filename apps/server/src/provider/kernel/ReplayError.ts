import { AdapterError, InvalidTranscript } from "../AdapterError.ts"

/**
 * A recorded transcript that cannot be replayed: an `AdapterError` whose reason is
 * `InvalidTranscript`, naming the 0-based index of the offending line; `cause`: what refused it
 * (a JSON parser's or a decoder's error), when something did.
 */
export const replayError = (message: string, line: number, cause?: unknown): AdapterError =>
  new AdapterError({
    reason: new InvalidTranscript(cause === undefined ? { message, line } : { message, line, cause })
  })

/** The 0-based index of the line a replay failed on (0, the meta line, when it names none). */
export const replayLineOf = (error: AdapterError): number =>
  error.reason._tag === "InvalidTranscript" ? (error.reason.line ?? 0) : 0
