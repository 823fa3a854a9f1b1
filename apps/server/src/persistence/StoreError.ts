import { Schema } from "effect"
import { PersistedEventError } from "./PersistedEvent.ts"

/**
 * Why the store failed, so that callers can tell a broken store from a broken row:
 * - `unavailable`: the store cannot be opened (file, permissions, migrations), or its database
 *   went away (PostgreSQL: a lost connection, a restart): the same work may succeed later;
 * - `read` / `write`: a query or a transaction failed (I/O, disk full, busy, a constraint);
 * - `corrupt`: a stored row does not decode into the shape it was written in;
 * - `fenced`: an append for a thread whose session lease this replica does not hold (replicas).
 */
export const StoreFailure = Schema.Literals(["unavailable", "read", "write", "corrupt", "fenced"])
export type StoreFailure = typeof StoreFailure.Type

/** A failure of the persistence layer, whatever the engine: every store service fails with it, none throws. */
export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  reason: StoreFailure,
  message: Schema.String
}) {}

/**
 * The `catch` of an `Effect.try` around an engine call: what was being done, and the engine's
 * own message. A row that does not decode is `corrupt` whatever the operation was.
 */
export const storeFailure =
  (reason: StoreFailure, doing: string) =>
  (cause: unknown): StoreError => {
    if (cause instanceof PersistedEventError) return new StoreError({ reason: "corrupt", message: cause.message })
    const detail = cause instanceof Error ? cause.message : String(cause)
    // A stored JSON column that does not parse, or parses into the wrong shape.
    const corrupt = cause instanceof SyntaxError || Schema.isSchemaError(cause)
    return new StoreError({ reason: corrupt ? "corrupt" : reason, message: `cannot ${doing}: ${detail}` })
  }
