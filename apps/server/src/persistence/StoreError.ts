import { Schema } from "effect"
import { definedFields } from "../util/definedFields.ts"
import { describeCause } from "../util/describeCause.ts"

/**
 * What every reason keeps (as Effect's `SqlError` reasons do): the engine's own failure as it
 * was thrown (`cause`: a driver error, a `SchemaError`, PostgreSQL's fencing refusal), what was being done
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

/** A value past its documented bound (a provider state over PROVIDER_STATE_MAX_BYTES): not stored. */
export class StoreTooLarge extends Schema.TaggedError<StoreTooLarge>()("StoreTooLarge", ReasonFields) {
  get isRetryable(): boolean {
    return false
  }
}
/** An operator query for a prompt the store does not hold. */
export class PromptNotFound extends Schema.TaggedError<PromptNotFound>()("PromptNotFound", {
  promptId: Schema.String,
  message: Schema.String
}) {
  get isRetryable(): boolean {
    return false
  }
}

/**
 * Why a command relayed to the replica that owns its thread (postgres/PgCommandRelay.ts) has no
 * reply. The words a client reads are made in server/WireErrors.ts; these keep the facts.
 */
const RelayFields = { threadId: Schema.String }
/** The owner did not take it within `boundMs`: it was withdrawn and never runs. */
export class RelayUnreachable extends Schema.TaggedError<RelayUnreachable>()("RelayUnreachable", {
  ...RelayFields,
  boundMs: Schema.Finite
}) {
  get isRetryable(): boolean {
    return true
  }
}
/** The owner took it, then lost its lease before replying: it may or may not have run. */
export class RelayLost extends Schema.TaggedError<RelayLost>()("RelayLost", RelayFields) {
  get isRetryable(): boolean {
    return false
  }
}
/** The owner could not open it (the replicas do not share one token): it did not run. */
export class RelayTokenMismatch extends Schema.TaggedError<RelayTokenMismatch>()("RelayTokenMismatch", {}) {
  get isRetryable(): boolean {
    return false
  }
}

export const StoreErrorReason = Schema.Union([
  StoreUnavailable,
  StoreReadFailed,
  StoreWriteFailed,
  StoreCorrupt,
  StoreFenced,
  StoreTooLarge,
  PromptNotFound,
  RelayUnreachable,
  RelayLost,
  RelayTokenMismatch
])
export type StoreErrorReason = typeof StoreErrorReason.Type

/** The reason a `storeFailure` call site names (the reason's class is chosen from it). */
export type StoreFailure = "unavailable" | "read" | "write" | "corrupt" | "fenced" | "too_large"
const reasonClass = {
  unavailable: StoreUnavailable,
  read: StoreReadFailed,
  write: StoreWriteFailed,
  corrupt: StoreCorrupt,
  fenced: StoreFenced,
  too_large: StoreTooLarge
} as const

/** The reasons a relayed command fails with (their words for a client: server/WireErrors.ts). */
export type RelayFailure = RelayUnreachable | RelayLost | RelayTokenMismatch
export const isRelayFailure = (reason: StoreErrorReason): reason is RelayFailure =>
  reason._tag === "RelayUnreachable" || reason._tag === "RelayLost" || reason._tag === "RelayTokenMismatch"

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
    // For the log only: a client reads a relay failure in server/WireErrors.ts's words.
    if (isRelayFailure(reason)) return `a relayed command has no reply: ${reason._tag}`
    if (reason._tag === "PromptNotFound") return reason.message
    // An Error's `message` is "" when none was given.
    if (reason.message) return reason.message
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
    // Thrown by the engine's own code already classified (a row that does not decode, a fenced append).
    if (cause instanceof StoreError) return cause
    // A stored JSON column that does not parse, or parses into the wrong shape.
    const corrupt = cause instanceof SyntaxError || Schema.isSchemaError(cause)
    return storeError(corrupt ? "corrupt" : reason, { operation: doing, cause })
  }
