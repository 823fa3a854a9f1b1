import type { NotificationMessage } from "@planbridge/contracts"
import { Effect, Schema } from "effect"
import { createHmac } from "node:crypto"
import type { NotificationSink } from "../persistence/NotificationStore.ts"
import { answerCapability } from "./AnswerCapability.ts"
import type { NotificationKeys } from "./NotificationKeys.ts"

/**
 * One delivery to one sink: a Web Push message (encrypted to the subscription and signed with
 * the VAPID key by the `web-push` library, sent with `fetch`), or a webhook POST signed with
 * HMAC-SHA256. Answers the HTTP status; fails with `DeliveryError` when no status came back.
 */
/**
 * The notify layer's one error. The message is what the delivery's attempt records (so the words
 * of the `fetch` or encryption failure, with its name); `cause`: that failure itself, for the log.
 */
export class DeliveryError extends Schema.TaggedError<DeliveryError>()("DeliveryError", {
  message: Schema.String,
  cause: Schema.optionalKey(Schema.Defect())
}) {}

/** How long a delivery may take before it counts as failed (and is retried). */
export const DELIVERY_TIMEOUT_MS = 10_000
/** The largest payload sent: a push service takes 4 KiB, less the encryption's own bytes. */
export const MAX_PAYLOAD_BYTES = 3_072
/** How long a push service keeps a message for an offline browser. */
const PUSH_TTL_SECONDS = 24 * 60 * 60

/** The webhook's signature header: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const SIGNATURE_HEADER = "planbridge-signature"

export const webhookSignature = (secret: string, timestamp: number, body: string): string =>
  `t=${timestamp},v1=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`

/**
 * A Web Push message's payload: the message, each action with its answer capability for this
 * subscription. Only Web Push gets them: its payload is encrypted to the browser's own keys, so
 * the push service cannot read them; a webhook's relay is a third party and gets none.
 */
const withAnswers = (message: NotificationMessage, sinkId: string, keys: NotificationKeys): NotificationMessage => ({
  ...message,
  actions: message.actions.map((action) => ({
    ...action,
    answer: answerCapability(keys.answerKey, sinkId, {
      promptId: message.promptId,
      questionId: action.questionId,
      optionId: action.optionId
    })
  }))
})

/** A Web Push `Topic` (at most 32 URL-safe characters): a later message on it replaces a queued one. */
const topicOf = (tag: string): string =>
  createHmac("sha256", "planbridge-topic").update(tag).digest("base64url").slice(0, 32)

const post = (url: string, headers: Record<string, string>, body: Uint8Array | string) =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(url, {
        method: "POST",
        headers,
        body,
        signal: AbortSignal.any([signal, AbortSignal.timeout(DELIVERY_TIMEOUT_MS)])
      })
      // The body is not ours to keep; it is drained so the connection can be reused.
      await response.arrayBuffer().catch(() => undefined)
      return response.status
    },
    catch: (cause) =>
      new DeliveryError({ message: cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause), cause })
  })

export const deliver = (
  sink: NotificationSink,
  message: NotificationMessage,
  notificationId: string,
  keys: NotificationKeys
): Effect.Effect<number, DeliveryError> =>
  Effect.suspend(() => {
    const payload = JSON.stringify(sink.kind === "webpush" ? withAnswers(message, sink.sinkId, keys) : message)
    if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES)
      return Effect.fail(new DeliveryError({ message: `the payload is over ${MAX_PAYLOAD_BYTES} bytes` }))
    if (sink.kind === "webhook") {
      const timestamp = Math.floor(Date.now() / 1000)
      const headers = {
        "content-type": "application/json",
        [SIGNATURE_HEADER]: webhookSignature(keys.webhookSecret, timestamp, payload),
        "planbridge-delivery": notificationId
      }
      return post(sink.endpoint, headers, payload)
    }
    // `web-push` is loaded by the first Web Push delivery, not by the server's start.
    const details = Effect.tryPromise({
      try: async () =>
        (await import("web-push")).default.generateRequestDetails(
          { endpoint: sink.endpoint, keys: { p256dh: sink.p256dh, auth: sink.auth } },
          payload,
          {
            vapidDetails: keys.vapid,
            TTL: PUSH_TTL_SECONDS,
            topic: topicOf(message.tag),
            urgency: message.kind === "opened" ? "high" : "normal",
            contentEncoding: "aes128gcm"
          }
        ),
      catch: (cause) => new DeliveryError({ message: `cannot encrypt for the subscription: ${String(cause)}`, cause })
    })
    return Effect.flatMap(details, (request) => {
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(request.headers)) headers[name] = String(value)
      return post(request.endpoint, headers, request.body)
    })
  })
