import { Clock, Context, Effect, Layer, Option, Schedule } from "effect"
import { hostname } from "node:os"
import { NotificationStore, type ClaimedNotification } from "../persistence/NotificationStore.ts"
import { SessionLeases } from "../persistence/SessionLeases.ts"
import { verifyAnswerCapability, type AnswerTarget } from "./AnswerCapability.ts"
import { loadOrCreateNotificationKeys, type NotificationKeys } from "./NotificationKeys.ts"
import { DELIVERY_TIMEOUT_MS, deliver } from "./SinkDelivery.ts"

/**
 * The notification sender (issue 29): derives the outbox from the log and delivers what is due,
 * on a fiber of its own, in transactions of its own: ingestion never waits for a sink. A failed
 * attempt (no answer, a 429 or 5xx) is recorded and retried with a doubling delay, up to
 * `MAX_ATTEMPTS`; a subscription the push service says is gone (404, 410), or any other 4xx,
 * is not retried. Every attempt and its outcome is in the store (`planbridge notifications
 * status`, `GET /api/notifications/status`).
 */
export const NOTIFY_BOUNDS = {
  /** Attempts per notification, the first included. */
  maxAttempts: 6,
  /** The first retry's delay, doubled per attempt up to `maxRetryDelayMs`. */
  firstRetryDelayMs: 1_000,
  maxRetryDelayMs: 60_000,
  /** How often the outbox is looked at. */
  pollMs: 250,
  /** Events derived, and notifications claimed, per look. */
  batch: 100,
  /** A claim outlives a delivery's timeout, so no other replica sends it meanwhile. */
  claimMs: DELIVERY_TIMEOUT_MS + 5_000,
  /** Deliveries under way at once (each sink's wait for an answer is bounded by the delivery timeout). */
  inFlight: 16
} as const

export class Notifications extends Context.Service<
  Notifications,
  {
    /** The VAPID public key browsers subscribe with (`applicationServerKey`). */
    readonly vapidPublicKey: string
    /** The sink a push action's answer capability was sent to, when it is one of ours for `target`. */
    readonly answerCapabilitySink: (capability: string, target: AnswerTarget) => string | undefined
  }
>()("planbridge/Notifications") {
  static readonly layer = (dataDir: string) =>
    Layer.effect(
      Notifications,
      Effect.gen(function* () {
        const keys = loadOrCreateNotificationKeys(dataDir)
        const store = yield* NotificationStore
        const leases = yield* Effect.serviceOption(SessionLeases)
        const replica = Option.match(leases, {
          onNone: () => `${hostname()}:${process.pid}`,
          onSome: (l) => l.replicaId
        })
        yield* Effect.forkScoped(sendLoop(store, keys, replica))
        return Notifications.of({
          vapidPublicKey: keys.vapid.publicKey,
          answerCapabilitySink: (capability, target) => verifyAnswerCapability(keys.answerKey, capability, target)
        })
      })
    )
}

const retryDelay = (attempt: number) =>
  Math.min(NOTIFY_BOUNDS.firstRetryDelayMs * 2 ** (attempt - 1), NOTIFY_BOUNDS.maxRetryDelayMs)

/** 429 and 5xx may pass; any other 4xx will not (a gone subscription is 404 or 410). */
const retryable = (status: number) => status === 429 || status >= 500

const deliverOne = (
  store: NotificationStore["Service"],
  keys: NotificationKeys,
  replica: string,
  claimed: ClaimedNotification
) =>
  Effect.gen(function* () {
    const outcome = yield* deliver(claimed.sink, claimed.message, claimed.notificationId, keys).pipe(
      Effect.map((statusCode) => ({ statusCode, error: null })),
      Effect.catch((error) => Effect.succeed({ statusCode: null, error: error.message }))
    )
    const now = yield* Clock.currentTimeMillis
    const attempt = claimed.attempts + 1
    const ok = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300
    const again =
      !ok && attempt < NOTIFY_BOUNDS.maxAttempts && (outcome.statusCode === null || retryable(outcome.statusCode))
    yield* store.record({
      notificationId: claimed.notificationId,
      attempt,
      replica,
      at: new Date(now).toISOString(),
      statusCode: outcome.statusCode,
      error: ok ? null : (outcome.error ?? `HTTP ${outcome.statusCode}`),
      status: ok ? "sent" : again ? "pending" : "failed",
      nextAttemptAt: again ? now + retryDelay(attempt) : now
    })
  })

/**
 * One look at the outbox: derive what the log added, and start delivering what is due, each
 * delivery on its own fiber (at most `inFlight` at once), so that a sink that does not answer
 * holds its own deliveries only, up to its timeout.
 */
const sendLoop = (store: NotificationStore["Service"], keys: NotificationKeys, replica: string) =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    let inFlight = 0
    const step = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      yield* store.derive(NOTIFY_BOUNDS.batch, now)
      const room = NOTIFY_BOUNDS.inFlight - inFlight
      if (room <= 0) return
      const due = yield* store.claim(replica, now, NOTIFY_BOUNDS.claimMs, Math.min(room, NOTIFY_BOUNDS.batch))
      for (const claimed of due) {
        inFlight++
        yield* deliverOne(store, keys, replica, claimed).pipe(
          Effect.catch((error) => Effect.logWarning(`notifications: ${error.message}`)),
          Effect.ensuring(Effect.sync(() => inFlight--)),
          Effect.forkIn(scope)
        )
      }
    })
    // Forever: a store that fails a look (PostgreSQL away) is logged and looked at again next time.
    yield* step.pipe(
      Effect.catch((error) => Effect.logWarning(`notifications: ${error.message}`)),
      Effect.repeat(Schedule.spaced(NOTIFY_BOUNDS.pollMs))
    )
  })
