import { ErrorCode } from "@planbridge/contracts"
import { Schema } from "effect"

/** A refused command, in the protocol's terms: clients branch on `code`, one of the protocol's `ErrorCode`s. */
export class CommandError extends Schema.TaggedError<CommandError>()("CommandError", {
  code: ErrorCode,
  message: Schema.String,
  path: Schema.optionalKey(Schema.Array(Schema.Union([Schema.String, Schema.Finite])))
}) {}

/**
 * The one message of `already_resolved`, whether the store saw the prompt or request resolved
 * or the provider session found it no longer pending (a race, or a plan it does not wait on).
 */
export const ALREADY_RESOLVED_MESSAGE =
  "already resolved: another answer came first, or it was cancelled or ended with its turn; the thread shows how it was resolved"

export const commandError = (code: ErrorCode, message: string, path?: ReadonlyArray<string | number>): CommandError =>
  new CommandError(path === undefined ? { code, message } : { code, message, path: [...path] })

/** The prompt, request or plan was resolved before this answer (see ALREADY_RESOLVED_MESSAGE). */
export const alreadyResolved = (): CommandError => commandError("already_resolved", ALREADY_RESOLVED_MESSAGE)
