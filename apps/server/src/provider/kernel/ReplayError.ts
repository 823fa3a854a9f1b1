import { Schema } from "effect"

/** A recorded transcript that cannot be replayed; `line` is the 0-based index of the offending line. */
export class ReplayError extends Schema.TaggedError<ReplayError>()("ReplayError", {
  message: Schema.String,
  line: Schema.Finite
}) {}
