import { NotificationMessage } from "@planbridge/contracts"
import { Schema } from "effect"
import type { ClaimedNotification, NotificationSink, NotificationStatus, SinkSummary } from "./NotificationStore.ts"
import type { notificationOutbox, notificationSinks } from "./schema.ts"

/**
 * The notification tables' rows as the outbox answers them, from the rows either engine read
 * (PostgreSQL's rows are SQLite's, its bigints read as numbers).
 */
const decodeMessage = Schema.decodeUnknownSync(NotificationMessage)

export const sinkRowOf = (sink: NotificationSink): typeof notificationSinks.$inferInsert =>
  sink.kind === "webpush"
    ? { ...sink }
    : {
        sinkId: sink.sinkId,
        kind: sink.kind,
        endpoint: sink.endpoint,
        clientId: sink.clientId,
        createdAt: sink.createdAt
      }

/** A stored sink: a Web Push subscription has its keys; anything else is a webhook. */
export const sinkOf = (row: typeof notificationSinks.$inferSelect): NotificationSink => {
  const { sinkId, endpoint, clientId, createdAt } = row
  return row.kind === "webpush" && row.p256dh !== null && row.auth !== null
    ? { sinkId, kind: "webpush", endpoint, p256dh: row.p256dh, auth: row.auth, clientId, createdAt }
    : { sinkId, kind: "webhook", endpoint, clientId, createdAt }
}

/** A sink as the status lists it: without its keys. */
export const sinkSummaryOf = (row: typeof notificationSinks.$inferSelect): SinkSummary => {
  const { sinkId, kind, endpoint, clientId, createdAt } = sinkOf(row)
  return { sinkId, kind, endpoint, clientId, createdAt }
}

export const claimedOf = (
  row: Pick<typeof notificationOutbox.$inferSelect, "notificationId" | "payload" | "attempts">,
  sink: NotificationSink
): ClaimedNotification => ({
  notificationId: row.notificationId,
  sink,
  message: decodeMessage(JSON.parse(row.payload)),
  attempts: row.attempts
})

export const countsOf = (
  grouped: ReadonlyArray<{ readonly status: string; readonly n: number }>
): NotificationStatus["counts"] => {
  const of = (status: string) => Number(grouped.find((g) => g.status === status)?.n ?? 0)
  return { pending: of("pending"), sent: of("sent"), failed: of("failed") }
}
