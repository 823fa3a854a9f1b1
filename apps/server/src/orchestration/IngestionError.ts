import { Schema } from "effect"
import { StoreError } from "../persistence/StoreError.ts"
import { describeCause } from "../util/describeCause.ts"

/** An event does not decode (`index`: its place in a batch of several); `cause`: the decoder's error. */
export class InvalidEvent extends Schema.TaggedError<InvalidEvent>()("InvalidEvent", {
  index: Schema.optionalKey(Schema.Finite),
  cause: Schema.Defect()
}) {
  override get message(): string {
    const detail = describeCause(this.cause)
    return this.index === undefined ? detail : `event #${this.index}: ${detail}`
  }
}

/** The store refused or failed the events (a fenced append, a full disk): final, not held. */
export class StoreRefused extends Schema.TaggedError<StoreRefused>()("StoreRefused", {
  cause: StoreError
}) {
  override get message(): string {
    return `cannot persist events: ${this.cause.message}`
  }
}

/**
 * The store stayed unreachable for longer than the outage bound while the events were held: none
 * was recorded. `cause`: the last failed attempt's error.
 */
export class StoreOutage extends Schema.TaggedError<StoreOutage>()("StoreOutage", {
  forMs: Schema.Finite,
  boundMs: Schema.Finite,
  cause: StoreError
}) {
  override get message(): string {
    return (
      `the store has been unavailable for ${this.forMs} ms (bound ${this.boundMs} ms); ` +
      `these events were not recorded: ${this.cause.message}`
    )
  }
}

export const IngestionErrorReason = Schema.Union([InvalidEvent, StoreRefused, StoreOutage])
export type IngestionErrorReason = typeof IngestionErrorReason.Type

/** Why ingestion did not record events: the reason keeps what failed below it (`cause`). */
export class IngestionError extends Schema.TaggedError<IngestionError>()("IngestionError", {
  reason: IngestionErrorReason
}) {
  /** The reason is the JavaScript error's cause (as Effect's `SqlError`): `Cause.pretty` shows the chain. */
  override readonly cause = this.reason
  override get message(): string {
    return this.reason.message
  }
}
