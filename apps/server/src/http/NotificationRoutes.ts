import { ClientId } from "@planbridge/contracts"
import { Effect, Schema } from "effect"
import type { FastifyInstance } from "fastify"
import { createHash } from "node:crypto"
import { commandError } from "../orchestration/CommandErrors.ts"
import { Notifications } from "../notify/Notifications.ts"
import { NotificationStore, NOTIFICATION_LIMITS } from "../persistence/NotificationStore.ts"
import type { OperatorReply } from "./OperatorRoutes.ts"

const HttpUrl = Schema.String.check(
  Schema.isMaxLength(2_048),
  Schema.makeFilter((text) => /^https?:\/\//u.test(text) && URL.canParse(text), {
    expected: "an http(s) URL"
  })
)
const Key = Schema.String.check(Schema.isNonEmpty(), Schema.isMaxLength(256))

/** A browser's `PushSubscription.toJSON()`, or a webhook's URL. */
const SinkBody = Schema.Union([
  Schema.Struct({
    kind: Schema.Literal("webpush"),
    subscription: Schema.Struct({ endpoint: HttpUrl, keys: Schema.Struct({ p256dh: Key, auth: Key }) }),
    clientId: Schema.optionalKey(ClientId)
  }),
  Schema.Struct({ kind: Schema.Literal("webhook"), url: HttpUrl, clientId: Schema.optionalKey(ClientId) })
])
const StatusQuery = Schema.Struct({
  limit: Schema.optionalKey(
    Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 500 }))
  )
})

const invalid = (message: string) => commandError("invalid_frame", message)
const decodeOr = <S extends Schema.Codec<unknown, unknown>>(schema: S, input: unknown) =>
  Schema.decodeUnknownEffect(schema)(input ?? {}).pipe(Effect.mapError((e) => invalid(e.message)))

/** One sink per endpoint: subscribing again from the same browser is the same sink. */
const sinkIdOf = (endpoint: string) => `sink-${createHash("sha256").update(endpoint).digest("hex").slice(0, 24)}`

/**
 * The notification routes of the operator API (issue 29), behind the token like every route:
 * the VAPID public key to subscribe with, sinks added and removed, and the outbox's status with
 * every recent attempt and its outcome.
 */
export const registerNotificationRoutes = (app: FastifyInstance, reply: OperatorReply): void => {
  app.get("/api/notifications/vapid-public-key", (_req, res) =>
    reply(
      res,
      Effect.gen(function* () {
        return { publicKey: (yield* Notifications).vapidPublicKey }
      })
    )
  )

  app.post("/api/notifications/sinks", (req, res) =>
    reply(
      res,
      Effect.gen(function* () {
        const body = yield* decodeOr(SinkBody, req.body)
        const createdAt = new Date().toISOString()
        const clientId = body.clientId ?? null
        const sink =
          body.kind === "webpush"
            ? {
                sinkId: sinkIdOf(body.subscription.endpoint),
                kind: "webpush" as const,
                endpoint: body.subscription.endpoint,
                p256dh: body.subscription.keys.p256dh,
                auth: body.subscription.keys.auth,
                clientId,
                createdAt
              }
            : { sinkId: sinkIdOf(body.url), kind: "webhook" as const, endpoint: body.url, clientId, createdAt }
        const added = yield* (yield* NotificationStore).addSink(sink)
        if (added === "full")
          return yield* Effect.fail(
            invalid(`a server keeps at most ${NOTIFICATION_LIMITS.sinks} sinks; remove one first`)
          )
        return { sinkId: sink.sinkId }
      })
    )
  )

  app.delete<{ Params: { id: string } }>("/api/notifications/sinks/:id", (req, res) =>
    reply(
      res,
      Effect.gen(function* () {
        return { removed: yield* (yield* NotificationStore).removeSink(req.params.id) }
      })
    )
  )

  app.get("/api/notifications/status", (req, res) =>
    reply(
      res,
      Effect.gen(function* () {
        const query = yield* decodeOr(StatusQuery, req.query)
        return yield* (yield* NotificationStore).status(query.limit ?? 50)
      })
    )
  )
}
