import type { ErrorCode } from "@planbridge/contracts"
import { Schema } from "effect"

/** A refused command, in the protocol's terms: clients branch on `code`. */
export class CommandError extends Schema.TaggedError<CommandError>()("CommandError", {
  code: Schema.String,
  message: Schema.String,
  path: Schema.optionalKey(Schema.Array(Schema.Union([Schema.String, Schema.Finite])))
}) {}

export const commandError = (code: ErrorCode, message: string, path?: ReadonlyArray<string | number>): CommandError =>
  new CommandError(path === undefined ? { code, message } : { code, message, path: [...path] })
