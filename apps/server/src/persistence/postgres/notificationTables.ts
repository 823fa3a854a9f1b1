import { bigint, index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core"

/**
 * The notification tables of the PostgreSQL store (issue 29), the twin of ../notificationTables.ts;
 * re-exported by schema.ts, which drizzle-kit generates the migrations from.
 */

/**
 * Where notifications go (issue 29): a browser's Web Push subscription (`webpush`, its endpoint
 * and its public keys) or a webhook (`webhook`, a URL; its HMAC secret is in the data dir, never
 * here). Not a projection: a rebuild leaves it alone.
 */
export const notificationSinks = pgTable("notification_sinks", {
  sinkId: text("sink_id").primaryKey(),
  kind: text("kind").notNull(),
  endpoint: text("endpoint").notNull(),
  /** Web Push: the subscription's `keys.p256dh` and `keys.auth` (public: they encrypt to it). */
  p256dh: text("p256dh"),
  auth: text("auth"),
  /** The client that subscribed, when it named itself. */
  clientId: text("client_id"),
  createdAt: text("created_at").notNull()
})

/**
 * The notification outbox, derived from the log (notify/OutboxDerivation.ts): one row per sink and
 * prompt event (`opened`, `resolved`), keyed by them, so a restart, a replay or a second replica
 * never makes a second one. A row is claimed (`claimed_by` until `claimed_until`, ms) by the
 * replica that sends it, and each attempt is recorded in `notification_attempts`.
 */
export const notificationOutbox = pgTable(
  "notification_outbox",
  {
    notificationId: text("notification_id").primaryKey(),
    sinkId: text("sink_id").notNull(),
    threadId: text("thread_id").notNull(),
    promptId: text("prompt_id").notNull(),
    event: text("event").notNull(),
    /** The message as sent (never a secret answer), as JSON. */
    payload: text("payload").notNull(),
    /** `pending`, `sent`, or `failed` (its attempts spent). */
    status: text("status").notNull(),
    attempts: integer("attempts").notNull(),
    nextAttemptAt: bigint("next_attempt_at", { mode: "number" }).notNull(),
    claimedBy: text("claimed_by"),
    claimedUntil: bigint("claimed_until", { mode: "number" }),
    lastStatus: integer("last_status"),
    lastError: text("last_error"),
    /** The log position of the event it was derived from. */
    seq: bigint("seq", { mode: "number" }).notNull(),
    createdAt: text("created_at").notNull(),
    sentAt: text("sent_at")
  },
  (t) => [index("notification_outbox_due").on(t.status, t.nextAttemptAt)]
)

/** Every delivery attempt and its outcome: the HTTP status, or the error. */
export const notificationAttempts = pgTable(
  "notification_attempts",
  {
    notificationId: text("notification_id").notNull(),
    attempt: integer("attempt").notNull(),
    at: text("at").notNull(),
    replica: text("replica").notNull(),
    statusCode: integer("status_code"),
    error: text("error")
  },
  (t) => [primaryKey({ columns: [t.notificationId, t.attempt] })]
)

/** How far the outbox has been derived from the log (one row). */
export const notificationCursor = pgTable("notification_cursor", {
  id: integer("id").primaryKey(),
  afterSeq: bigint("after_seq", { mode: "number" }).notNull()
})
