import { notificationMessageOf, type NotificationMessage, type RuntimeEvent } from "@planbridge/contracts"
import { Context, type Effect } from "effect"
import type { notificationOutbox } from "./schema.ts"
import type { StoreError } from "./StoreError.ts"

/**
 * The notification outbox in the store (issue 29), so that it holds across restarts and across
 * PostgreSQL replicas. Rows are derived from the log (`derive`, from a cursor kept in the same
 * transaction as the rows it adds), keyed by sink, event and prompt: deriving the same events
 * twice (a crash between the two, a second replica) adds nothing. A sender claims due rows for a
 * while (`claim`: one replica sends a row at a time), then records each attempt (`record`).
 */

/** A Web Push subscription or a webhook. */
export type NotificationSink =
  | {
      readonly sinkId: string
      readonly kind: "webpush"
      readonly endpoint: string
      readonly p256dh: string
      readonly auth: string
      readonly clientId: string | null
      readonly createdAt: string
    }
  | {
      readonly sinkId: string
      readonly kind: "webhook"
      readonly endpoint: string
      readonly clientId: string | null
      readonly createdAt: string
    }

/** A due notification, claimed by this replica, with where it goes. */
export interface ClaimedNotification {
  readonly notificationId: string
  readonly sink: NotificationSink
  readonly message: NotificationMessage
  /** Attempts made before this one. */
  readonly attempts: number
}

/** One attempt's outcome: `sent` (2xx), or not, with the status or the error, and when to retry. */
export interface AttemptRecord {
  readonly notificationId: string
  readonly attempt: number
  readonly replica: string
  readonly at: string
  readonly statusCode: number | null
  readonly error: string | null
  /** `sent`, `pending` (to be retried at `nextAttemptAt`) or `failed` (its attempts spent, or the sink gone). */
  readonly status: "sent" | "pending" | "failed"
  readonly nextAttemptAt: number
}

export interface OutboxRow {
  readonly notificationId: string
  readonly sinkId: string
  readonly promptId: string
  readonly event: string
  readonly status: string
  readonly attempts: number
  readonly lastStatus: number | null
  readonly lastError: string | null
  readonly createdAt: string
  readonly sentAt: string | null
}

/** A sink as the status lists it: without its keys. */
export interface SinkSummary {
  readonly sinkId: string
  readonly kind: "webpush" | "webhook"
  readonly endpoint: string
  readonly clientId: string | null
  readonly createdAt: string
}

export interface NotificationStatus {
  readonly sinks: ReadonlyArray<SinkSummary>
  readonly counts: { readonly pending: number; readonly sent: number; readonly failed: number }
  /** The latest rows, newest first (at most `limit`). */
  readonly recent: ReadonlyArray<OutboxRow>
  /** The latest attempts, newest first (at most `limit`). */
  readonly attempts: ReadonlyArray<{
    readonly notificationId: string
    readonly attempt: number
    readonly at: string
    readonly replica: string
    readonly statusCode: number | null
    readonly error: string | null
  }>
}

/** Sinks kept at once, and rows an outbox keeps: past them a new sink is refused, old sent rows go. */
export const NOTIFICATION_LIMITS = { sinks: 100, keptRows: 10_000 } as const

export class NotificationStore extends Context.Service<
  NotificationStore,
  {
    readonly addSink: (sink: NotificationSink) => Effect.Effect<"added" | "full", StoreError>
    readonly removeSink: (sinkId: string) => Effect.Effect<boolean, StoreError>
    /**
     * Derives the rows of the next `limit` events of the log after the cursor; a first call only
     * places the cursor at the log's end (history is never notified). Answers how many rows it added.
     */
    readonly derive: (limit: number, nowMs: number) => Effect.Effect<number, StoreError>
    readonly claim: (
      replica: string,
      nowMs: number,
      leaseMs: number,
      limit: number
    ) => Effect.Effect<ReadonlyArray<ClaimedNotification>, StoreError>
    readonly record: (attempt: AttemptRecord) => Effect.Effect<void, StoreError>
    readonly status: (limit: number) => Effect.Effect<NotificationStatus, StoreError>
  }
>()("planbridge/NotificationStore") {}

/** The event types the outbox is derived from. */
export const NOTIFIED_TYPES = ["user-input.requested", "user-input.resolved"] as const

/** The rows one logged event makes, one per sink (none for an event that notifies nothing). */
export const outboxRowsOf = (
  seq: number,
  event: RuntimeEvent,
  sinkIds: ReadonlyArray<string>,
  nowMs: number
): ReadonlyArray<typeof notificationOutbox.$inferInsert> => {
  const message = notificationMessageOf(event)
  if (message === undefined) return []
  return sinkIds.map((sinkId) => ({
    notificationId: `${sinkId}|${message.kind}|${message.promptId}`,
    sinkId,
    threadId: event.threadId,
    promptId: message.promptId,
    event: message.kind,
    payload: JSON.stringify(message),
    status: "pending",
    attempts: 0,
    nextAttemptAt: nowMs,
    claimedBy: null,
    claimedUntil: null,
    lastStatus: null,
    lastError: null,
    seq,
    createdAt: new Date(nowMs).toISOString(),
    sentAt: null
  }))
}
