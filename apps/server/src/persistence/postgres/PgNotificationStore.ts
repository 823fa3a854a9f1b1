import { and, asc, count, desc, eq, gt, isNull, lte, or, sql } from "drizzle-orm"
import { Effect, Layer } from "effect"
import {
  NOTIFICATION_LIMITS,
  NOTIFIED_TYPES,
  NotificationStore,
  outboxRowsOf,
  type AttemptRecord,
  type NotificationSink
} from "../NotificationStore.ts"
import { claimedOf, countsOf, sinkOf, sinkRowOf, sinkSummaryOf } from "../NotificationRows.ts"
import { decodePersistedEvent } from "../PersistedEvent.ts"
import { storeFailure } from "../StoreError.ts"
import { PgDatabase } from "./PgDatabase.ts"
import { readCommittedHorizon } from "./PgCommittedHorizon.ts"
import { events, notificationAttempts, notificationCursor, notificationOutbox, notificationSinks } from "./schema.ts"

/**
 * `NotificationStore` on PostgreSQL, shared by the replicas: deriving holds the cursor's row lock
 * (one replica derives a range at a time; the rows' keys make a repeat harmless anyway), and a
 * claim skips the rows another replica holds locked (`FOR UPDATE SKIP LOCKED`), so a row is sent
 * by one replica. The log's text is searched for the event types as SqliteNotificationStore's
 * `json_extract` would find them (OperatorQueries.ts's reason), each candidate decoded.
 */
export const pgNotificationStore = Layer.effect(
  NotificationStore,
  Effect.gen(function* () {
    const { db, pool } = yield* PgDatabase

    const addSink = (sink: NotificationSink) =>
      db.transaction(async (tx): Promise<"added" | "full"> => {
        // Serialises additions, so the bound holds across replicas.
        await tx.execute(sql`select pg_advisory_xact_lock(hashtext('planbridge.notification_sinks'))`)
        const [row] = await tx.select({ n: count() }).from(notificationSinks)
        if ((row?.n ?? 0) >= NOTIFICATION_LIMITS.sinks) return "full"
        await tx.insert(notificationSinks).values(sinkRowOf(sink)).onConflictDoNothing()
        return "added"
      })

    const removeSink = (sinkId: string) =>
      db.transaction(async (tx) => {
        const removed = await tx
          .delete(notificationSinks)
          .where(eq(notificationSinks.sinkId, sinkId))
          .returning({ sinkId: notificationSinks.sinkId })
        await tx
          .update(notificationOutbox)
          .set({ status: "failed", lastError: "the sink was removed" })
          .where(and(eq(notificationOutbox.sinkId, sinkId), eq(notificationOutbox.status, "pending")))
        return removed.length > 0
      })

    /**
     * The highest `seq` below which every event has committed, without stopping appends
     * (PgCommittedHorizon.ts): appends from different threads run at once, so a smaller `seq` can
     * commit after a larger one; the `max(seq)` read is safe once the appends in flight when it
     * was read have ended.
     */
    const committedHorizon = () => readCommittedHorizon(pool)

    const derive = (limit: number, nowMs: number) =>
      committedHorizon().then((horizon) => deriveUpTo(horizon, limit, nowMs))

    const deriveUpTo = (horizon: number, limit: number, nowMs: number) =>
      db.transaction(async (tx) => {
        await tx.insert(notificationCursor).values({ id: 1, afterSeq: -1 }).onConflictDoNothing()
        const [cursor] = await tx.select().from(notificationCursor).where(eq(notificationCursor.id, 1)).for("update")
        if (cursor === undefined) return 0
        if (cursor.afterSeq < 0) {
          // The first derivation places the cursor at the log's end: history is never notified.
          await tx.update(notificationCursor).set({ afterSeq: horizon }).where(eq(notificationCursor.id, 1))
          return 0
        }
        const candidates = await tx
          .select()
          .from(events)
          .where(
            and(
              gt(events.seq, cursor.afterSeq),
              lte(events.seq, horizon),
              or(...NOTIFIED_TYPES.map((t) => sql`strpos(${events.event}, ${`"type":${JSON.stringify(t)}`}) > 0`))
            )
          )
          .orderBy(asc(events.seq))
          .limit(limit)
        const end = candidates.length === limit ? candidates.at(-1)!.seq : horizon
        const sinkIds = (await tx.select({ sinkId: notificationSinks.sinkId }).from(notificationSinks)).map(
          (s) => s.sinkId
        )
        let added = 0
        for (const row of candidates) {
          const rows = outboxRowsOf(row.seq, decodePersistedEvent(row), sinkIds, nowMs)
          if (rows.length === 0) continue
          const inserted = await tx
            .insert(notificationOutbox)
            .values([...rows])
            .onConflictDoNothing()
            .returning({ id: notificationOutbox.notificationId })
          added += inserted.length
        }
        await tx
          .update(notificationCursor)
          .set({ afterSeq: Math.max(cursor.afterSeq, end) })
          .where(eq(notificationCursor.id, 1))
        return added
      })

    const claim = (replica: string, nowMs: number, leaseMs: number, limit: number) =>
      db.transaction(async (tx) => {
        const due = await tx
          .select()
          .from(notificationOutbox)
          .where(
            and(
              eq(notificationOutbox.status, "pending"),
              lte(notificationOutbox.nextAttemptAt, nowMs),
              or(isNull(notificationOutbox.claimedUntil), lte(notificationOutbox.claimedUntil, nowMs))
            )
          )
          .orderBy(asc(notificationOutbox.seq), asc(notificationOutbox.notificationId))
          .limit(limit)
          .for("update", { skipLocked: true })
        const claimed = []
        for (const row of due) {
          await tx
            .update(notificationOutbox)
            .set({ claimedBy: replica, claimedUntil: nowMs + leaseMs })
            .where(eq(notificationOutbox.notificationId, row.notificationId))
          const [sink] = await tx.select().from(notificationSinks).where(eq(notificationSinks.sinkId, row.sinkId))
          if (sink !== undefined) claimed.push(claimedOf(row, sinkOf(sink)))
        }
        return claimed
      })

    const record = (attempt: AttemptRecord) =>
      db.transaction(async (tx) => {
        const { notificationId, statusCode, error } = attempt
        await tx
          .insert(notificationAttempts)
          .values({
            notificationId,
            attempt: attempt.attempt,
            at: attempt.at,
            replica: attempt.replica,
            statusCode,
            error
          })
          .onConflictDoNothing()
        await tx
          .update(notificationOutbox)
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
        const [kept] = await tx.select({ n: count() }).from(notificationOutbox)
        const excess = (kept?.n ?? 0) - NOTIFICATION_LIMITS.keptRows
        if (excess <= 0) return
        const oldest = await tx
          .select({ id: notificationOutbox.notificationId })
          .from(notificationOutbox)
          .where(eq(notificationOutbox.status, "sent"))
          .orderBy(asc(notificationOutbox.seq))
          .limit(excess)
        for (const { id } of oldest) {
          await tx.delete(notificationAttempts).where(eq(notificationAttempts.notificationId, id))
          await tx.delete(notificationOutbox).where(eq(notificationOutbox.notificationId, id))
        }
      })

    const status = async (limit: number) => {
      const sinks = await db.select().from(notificationSinks).orderBy(asc(notificationSinks.createdAt))
      const grouped = await db
        .select({ status: notificationOutbox.status, n: count() })
        .from(notificationOutbox)
        .groupBy(notificationOutbox.status)
      const recent = await db
        .select()
        .from(notificationOutbox)
        .orderBy(desc(notificationOutbox.seq), asc(notificationOutbox.notificationId))
        .limit(limit)
      const attempts = await db
        .select()
        .from(notificationAttempts)
        .orderBy(desc(notificationAttempts.at), desc(notificationAttempts.attempt))
        .limit(limit)
      return { sinks: sinks.map(sinkSummaryOf), counts: countsOf(grouped), recent, attempts }
    }

    return NotificationStore.of({
      addSink: (sink) => Effect.tryPromise({ try: () => addSink(sink), catch: storeFailure("write", "add a sink") }),
      removeSink: (id) =>
        Effect.tryPromise({ try: () => removeSink(id), catch: storeFailure("write", "remove a sink") }),
      derive: (limit, nowMs) =>
        Effect.tryPromise({ try: () => derive(limit, nowMs), catch: storeFailure("write", "derive notifications") }),
      claim: (replica, nowMs, leaseMs, limit) =>
        Effect.tryPromise({
          try: () => claim(replica, nowMs, leaseMs, limit),
          catch: storeFailure("write", "claim notifications")
        }),
      record: (attempt) =>
        Effect.tryPromise({
          try: () => record(attempt),
          catch: storeFailure("write", "record a notification attempt")
        }),
      status: (limit) =>
        Effect.tryPromise({ try: () => status(limit), catch: storeFailure("read", "read the notification status") })
    })
  })
)
