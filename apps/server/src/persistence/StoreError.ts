import { Schema } from "effect"
import { definedFields } from "../util/definedFields.ts"
import { describeCause } from "../util/describeCause.ts"
import { PersistedEventError } from "./PersistedEvent.ts"

/**
 * What every reason keeps (as Effect's `SqlError` reasons do): the engine's own failure as it
 * was thrown (`cause`: a driver error, a `SchemaError`, a `FencedAppend`), what was being done
 * (`operation`, read as "cannot <operation>"), and a message only where no cause says it.
 */
const ReasonFields = {
  operation: Schema.optionalKey(Schema.String),
  cause: Schema.Defect(),
  message: Schema.optionalKey(Schema.String)
}

/**
 * The store cannot be opened (file, permissions, migrations), or its database went away
 * (PostgreSQL: a lost connection, a restart): the same work may succeed later.
 */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>()("StoreUnavailable", ReasonFields) {
  get isRetryable(): boolean {
    return true
  }
}
/** A query failed (I/O, busy). */
export class StoreReadFailed extends Schema.TaggedError<StoreReadFailed>()("StoreReadFailed", ReasonFields) {
  get isRetryable(): boolean {
    return false
  }
}
/** A transaction failed (I/O, disk full, busy, a constraint). */
export class StoreWriteFailed extends Schema.TaggedError<StoreWriteFailed>()("StoreWriteFailed", ReasonFields) {
  get isRetryable(): boolean {
    return false
  }
}
/** A stored row does not decode into the shape it was written in. */
export class StoreCorrupt extends Schema.TaggedError<StoreCorrupt>()("StoreCorrupt", ReasonFields) {
  get isRetryable(): boolean {
    return false
  }
}
/** An append for a thread whose session lease this replica does not hold (replicas): final. */
export class StoreFenced extends Schema.TaggedError<StoreFenced>()("StoreFenced", ReasonFields) {
  get isRetryable(): boolean {
    return false
  }
}

export const StoreErrorReason = Schema.Union([
  StoreUnavailable,
  StoreReadFailed,
  StoreWriteFailed,
  StoreCorrupt,
  StoreFenced
])
export type StoreErrorReason = typeof StoreErrorReason.Type

/** The reason a `storeFailure` call site names (the reason's class is chosen from it). */
export type StoreFailure = "unavailable" | "read" | "write" | "corrupt" | "fenced"
const reasonClass = {
  unavailable: StoreUnavailable,
  read: StoreReadFailed,
  write: StoreWriteFailed,
  corrupt: StoreCorrupt,
  fenced: StoreFenced
} as const

/**
 * A failure of the persistence layer, whatever the engine: every store service fails with it,
 * none throws. Callers tell a broken store from a broken row by `reason._tag`; the message is
 * derived from the reason, and the engine's failure stays the reason's `cause`.
 */
export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  reason: StoreErrorReason
}) {
  /** The reason is the JavaScript error's cause (as Effect's `SqlError`): `Cause.pretty` shows the chain. */
  override readonly cause = this.reason
  override get message(): string {
    const { reason } = this
    // An Error's `message` is "" when none was given.
    if (reason.message) return reason.message
    // A row that does not decode says which row; the operation adds nothing.
    if (reason.cause instanceof PersistedEventError) return reason.cause.message
    const detail = describeCause(reason.cause)
    return reason.operation === undefined ? detail : `cannot ${reason.operation}: ${detail}`
  }
  /** The same work may succeed later (the store was unavailable). */
  get isRetryable(): boolean {
    return this.reason.isRetryable
  }
}

/** A store error of the given reason, for failures that no `storeFailure` catch sees. */
export const storeError = (
  reason: StoreFailure,
  fields: { readonly operation?: string; readonly cause?: unknown; readonly message?: string }
): StoreError =>
  new StoreError({
    reason: new reasonClass[reason]({
      cause: fields.cause,
      ...definedFields({ operation: fields.operation, message: fields.message })
    })
  })

/**
 * The `catch` of an `Effect.try` around an engine call: what was being done, and the engine's
 * failure itself. A row that does not decode is `corrupt` whatever the operation was.
 */
export const storeFailure =
  (reason: StoreFailure, doing: string) =>
  (cause: unknown): StoreError => {
    // A stored JSON column that does not parse, or parses into the wrong shape.
    const corrupt = cause instanceof PersistedEventError || cause instanceof SyntaxError || Schema.isSchemaError(cause)
    return storeError(corrupt ? "corrupt" : reason, { operation: doing, cause })
  }
