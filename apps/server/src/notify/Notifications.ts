import { Clock, Context, Effect, Layer, Option, PubSub, Queue } from "effect"
import { hostname } from "node:os"
import { EventStore } from "../persistence/EventStore.ts"
import { NOTIFIED_TYPES, NotificationStore, type ClaimedNotification } from "../persistence/NotificationStore.ts"
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
  /**
   * The outbox is looked at when the log commits an event that notifies (a question asked or
   * resolved) or `batch` events since the last look, when a retry this sender scheduled is due,
   * when a delivery ends, and at least this often: what only the store knows (another replica's
   * retries, a claim whose replica died). Idle, that is all it does: no poll.
   */
  idleLookMs: 5_000,
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
        const keys = yield* Effect.promise(() => loadOrCreateNotificationKeys(dataDir))
        const store = yield* NotificationStore
        const events = yield* EventStore
        const leases = yield* Effect.serviceOption(SessionLeases)
        const replica = Option.match(leases, {
          onNone: () => `${hostname()}:${process.pid}`,
          onSome: (l) => l.replicaId
        })
        yield* Effect.forkScoped(sendLoop(store, events, keys, replica))
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

/** One attempt: delivered, then recorded; answers when a retry of it is due, if one is. */
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
    const nextAttemptAt = again ? now + retryDelay(attempt) : now
    yield* store.record({
      notificationId: claimed.notificationId,
      attempt,
      replica,
      at: new Date(now).toISOString(),
      statusCode: outcome.statusCode,
      error: ok ? null : (outcome.error ?? `HTTP ${outcome.statusCode}`),
      status: ok ? "sent" : again ? "pending" : "failed",
      nextAttemptAt
    })
    return again ? nextAttemptAt : undefined
  })

const notifies: ReadonlySet<string> = new Set(NOTIFIED_TYPES)

/**
 * The sender's fiber: a look at the outbox derives what the log added and starts delivering what
 * is due, each delivery on its own fiber (at most `inFlight` at once), so that a sink that does
 * not answer holds its own deliveries only, up to its timeout. Between looks it waits for a wake
 * (see `idleLookMs`) or the earliest retry it scheduled.
 */
const sendLoop = (
  store: NotificationStore["Service"],
  events: EventStore["Service"],
  keys: NotificationKeys,
  replica: string
) =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    // One pending wake is enough: a look handles everything due when it runs.
    const wake = yield* Queue.sliding<void>(1)
    const wakeUp = () => void Queue.offerUnsafe(wake, undefined)
    let inFlight = 0
    /** Events committed since the last look that no look has derived yet (an upper bound). */
    let underived = 0
    /** When the retries this sender scheduled are due (ms), each dropped once a look has run at it. */
    let retriesDue: Array<number> = []
    const subscription = yield* events.subscribe
    yield* Effect.forkIn(
      Effect.forever(
        Effect.map(PubSub.takeAll(subscription), (committed) => {
          underived += committed.length
          if (underived >= NOTIFY_BOUNDS.batch || committed.some((stored) => notifies.has(stored.event.type))) wakeUp()
        })
      ),
      scope
    )
    const look = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      retriesDue = retriesDue.filter((due) => due > now)
      const behind = underived > NOTIFY_BOUNDS.batch
      yield* store.derive(NOTIFY_BOUNDS.batch, now)
      underived = Math.max(0, underived - NOTIFY_BOUNDS.batch)
      // More of the log than one look derives: the next look follows at once.
      if (behind) wakeUp()
      const room = NOTIFY_BOUNDS.inFlight - inFlight
      if (room <= 0) return
      const due = yield* store.claim(replica, now, NOTIFY_BOUNDS.claimMs, Math.min(room, NOTIFY_BOUNDS.batch))
      // A full claim may have left more due behind it.
      if (due.length === Math.min(room, NOTIFY_BOUNDS.batch)) wakeUp()
      for (const claimed of due) {
        inFlight++
        yield* deliverOne(store, keys, replica, claimed).pipe(
          Effect.tap((retryAt) =>
            Effect.sync(() => {
              if (retryAt !== undefined) retriesDue.push(retryAt)
            })
          ),
          Effect.catch((error) => Effect.logWarning(`notifications: ${error.message}`)),
          Effect.ensuring(
            Effect.sync(() => {
              inFlight--
              wakeUp()
            })
          ),
          Effect.forkIn(scope)
        )
      }
    })
    // Forever: a store that fails a look (PostgreSQL away) is logged and looked at again next time.
    for (;;) {
      yield* look.pipe(Effect.catch((error) => Effect.logWarning(`notifications: ${error.message}`)))
      const now = yield* Clock.currentTimeMillis
      const waitMs = Math.min(NOTIFY_BOUNDS.idleLookMs, ...retriesDue.map((due) => due - now))
      yield* Queue.take(wake).pipe(Effect.timeoutOption(Math.max(0, waitMs)))
    }
  })
