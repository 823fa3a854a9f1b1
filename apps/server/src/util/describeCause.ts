/**
 * A cause's own words, for a message a person reads: an `Error`'s message, anything else as
 * text. The one place a kept `cause` is turned into text; the cause object itself stays on the
 * error (and the whole `Cause` is logged where it reaches the wire: server/WireErrors.ts).
 */
export const describeCause = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))
