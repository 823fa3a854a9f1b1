import { and, asc, count, desc, eq, gt, isNull, lte, or, sql } from "drizzle-orm"
import { Effect, Layer } from "effect"
import { Database } from "./Database.ts"
import {
  NOTIFICATION_LIMITS,
  NOTIFIED_TYPES,
  NotificationStore,
  outboxRowsOf,
  type AttemptRecord,
  type NotificationSink
} from "./NotificationStore.ts"
import { claimedOf, countsOf, sinkOf, sinkRowOf, sinkSummaryOf } from "./NotificationRows.ts"
import { decodePersistedEvent } from "./PersistedEvent.ts"
import { storeFailure } from "./StoreError.ts"
import { events, notificationAttempts, notificationCursor, notificationOutbox, notificationSinks } from "./schema.ts"

/** `NotificationStore` on SQLite: one writer, so each step is one plain transaction. */
export const sqliteNotificationStore = Layer.effect(
  NotificationStore,
  Effect.gen(function* () {
    const { db } = yield* Database

    const addSink = (sink: NotificationSink): "added" | "full" =>
      db.transaction((tx) => {
        const [row] = tx.select({ n: count() }).from(notificationSinks).all()
        if ((row?.n ?? 0) >= NOTIFICATION_LIMITS.sinks) return "full"
        tx.insert(notificationSinks).values(sinkRowOf(sink)).onConflictDoNothing().run()
        return "added"
      })

    const removeSink = (sinkId: string): boolean =>
      db.transaction((tx) => {
        const removed = tx.delete(notificationSinks).where(eq(notificationSinks.sinkId, sinkId)).run().changes > 0
        // What was still to go to it never will: said so, not left pending forever.
        tx.update(notificationOutbox)
          .set({ status: "failed", lastError: "the sink was removed" })
          .where(and(eq(notificationOutbox.sinkId, sinkId), eq(notificationOutbox.status, "pending")))
          .run()
        return removed
      })

    const derive = (limit: number, nowMs: number): number =>
      db.transaction((tx) => {
        const cursor = tx.select().from(notificationCursor).where(eq(notificationCursor.id, 1)).get()
        if (cursor === undefined) {
          const [last] = tx
            .select({ seq: sql<number>`coalesce(max(${events.seq}), 0)` })
            .from(events)
            .all()
          tx.insert(notificationCursor)
            .values({ id: 1, afterSeq: last?.seq ?? 0 })
            .run()
          return 0
        }
        const type = sql`json_extract(${events.event}, '$.type')`
        const rows = tx
          .select()
          .from(events)
          .where(
            and(
              gt(events.seq, cursor.afterSeq),
              sql`${type} in (${sql.join(
                NOTIFIED_TYPES.map((t) => sql`${t}`),
                sql`, `
              )})`
            )
          )
          .orderBy(asc(events.seq))
          .limit(limit)
          .all()
        const [end] =
          rows.length === limit
            ? [{ seq: rows.at(-1)!.seq }]
            : tx
                .select({ seq: sql<number>`coalesce(max(${events.seq}), 0)` })
                .from(events)
                .all()
        const sinkIds = tx
          .select({ sinkId: notificationSinks.sinkId })
          .from(notificationSinks)
          .all()
          .map((s) => s.sinkId)
        let added = 0
        for (const row of rows)
          for (const outbox of outboxRowsOf(row.seq, decodePersistedEvent(row), sinkIds, nowMs))
            added += tx.insert(notificationOutbox).values(outbox).onConflictDoNothing().run().changes
        tx.update(notificationCursor)
          .set({ afterSeq: Math.max(cursor.afterSeq, end?.seq ?? cursor.afterSeq) })
          .where(eq(notificationCursor.id, 1))
          .run()
        return added
      })

    const claim = (replica: string, nowMs: number, leaseMs: number, limit: number) =>
      db.transaction((tx) => {
        const due = tx
          .select()
          .from(notificationOutbox)
          .innerJoin(notificationSinks, eq(notificationSinks.sinkId, notificationOutbox.sinkId))
          .where(
            and(
              eq(notificationOutbox.status, "pending"),
              lte(notificationOutbox.nextAttemptAt, nowMs),
              or(isNull(notificationOutbox.claimedUntil), lte(notificationOutbox.claimedUntil, nowMs))
            )
          )
          .orderBy(asc(notificationOutbox.seq), asc(notificationOutbox.notificationId))
          .limit(limit)
          .all()
        for (const { notification_outbox: row } of due)
          tx.update(notificationOutbox)
            .set({ claimedBy: replica, claimedUntil: nowMs + leaseMs })
            .where(eq(notificationOutbox.notificationId, row.notificationId))
            .run()
        return due.map((d) => claimedOf(d.notification_outbox, sinkOf(d.notification_sinks)))
      })

    const record = (attempt: AttemptRecord): void =>
      db.transaction((tx) => {
        const { notificationId, statusCode, error } = attempt
        tx.insert(notificationAttempts)
          .values({
            notificationId,
            attempt: attempt.attempt,
            at: attempt.at,
            replica: attempt.replica,
            statusCode,
            error
          })
          .onConflictDoNothing()
          .run()
        tx.update(notificationOutbox)
          .set({
            status: attempt.status,
            attempts: attempt.attempt,
            nextAttemptAt: attempt.nextAttemptAt,
            claimedBy: null,
            claimedUntil: null,
            lastStatus: statusCode,
            lastError: error,
            ...(attempt.status === "sent" ? { sentAt: attempt.at } : {})
          })
          .where(eq(notificationOutbox.notificationId, notificationId))
          .run()
        // Bounded: past the kept rows, the oldest sent ones (and their attempts) go.
        const [kept] = tx.select({ n: count() }).from(notificationOutbox).all()
        const excess = (kept?.n ?? 0) - NOTIFICATION_LIMITS.keptRows
        if (excess > 0) {
          const oldest = tx
            .select({ id: notificationOutbox.notificationId })
            .from(notificationOutbox)
            .where(eq(notificationOutbox.status, "sent"))
            .orderBy(asc(notificationOutbox.seq))
            .limit(excess)
            .all()
          for (const { id } of oldest) {
            tx.delete(notificationAttempts).where(eq(notificationAttempts.notificationId, id)).run()
            tx.delete(notificationOutbox).where(eq(notificationOutbox.notificationId, id)).run()
          }
        }
      })

    const status = (limit: number) => {
      const sinks = db.select().from(notificationSinks).orderBy(asc(notificationSinks.createdAt)).all()
      const grouped = db
        .select({ status: notificationOutbox.status, n: count() })
        .from(notificationOutbox)
        .groupBy(notificationOutbox.status)
        .all()
      const recent = db
        .select()
        .from(notificationOutbox)
        .orderBy(desc(notificationOutbox.seq), asc(notificationOutbox.notificationId))
        .limit(limit)
        .all()
      const attempts = db
        .select()
        .from(notificationAttempts)
        .orderBy(desc(notificationAttempts.at), desc(notificationAttempts.attempt))
        .limit(limit)
        .all()
      return {
        sinks: sinks.map(sinkSummaryOf),
        counts: countsOf(grouped),
        recent,
        attempts
      }
    }

    return NotificationStore.of({
      addSink: (sink) => Effect.try({ try: () => addSink(sink), catch: storeFailure("write", "add a sink") }),
      removeSink: (id) => Effect.try({ try: () => removeSink(id), catch: storeFailure("write", "remove a sink") }),
      derive: (limit, nowMs) =>
        Effect.try({ try: () => derive(limit, nowMs), catch: storeFailure("write", "derive notifications") }),
      claim: (replica, nowMs, leaseMs, limit) =>
        Effect.try({
          try: () => claim(replica, nowMs, leaseMs, limit),
          catch: storeFailure("write", "claim notifications")
        }),
      record: (attempt) =>
        Effect.try({ try: () => record(attempt), catch: storeFailure("write", "record a notification attempt") }),
      status: (limit) =>
        Effect.try({ try: () => status(limit), catch: storeFailure("read", "read the notification status") })
    })
  })
)
