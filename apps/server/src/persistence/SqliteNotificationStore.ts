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
import { prepareNative } from "./NativeStatement.ts"
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

    /**
     * The statements of the sender's look (`derive`, then `claim`), prepared once on the connection
     * and run in better-sqlite3's own transaction wrapper, made once. The look runs every
     * `NOTIFY_BOUNDS.batch` events (10 times a second at 1,000 events/s), and drizzle built every
     * query, prepared every statement and made a transaction wrapper on each call: 0.27 + 0.49 ms
     * of CPU a look against 0.03 + 0.03 ms prepared (bench/PROFILE.md, Ingest, "Ninth round").
     * Prepared on first use, so that a failure is the look's `StoreError`, not the layer's.
     */
    const prepareLook = () => {
      const sqlite = db.$client
      const native = (query: Parameters<typeof prepareNative>[1]) => prepareNative(sqlite, query)
      const cursorOf = native(
        db
          .select({ afterSeq: sql<number>`${notificationCursor.afterSeq}`.as("afterSeq") })
          .from(notificationCursor)
          .where(eq(notificationCursor.id, 1))
      )
      const lastSeq = native(db.select({ seq: sql<number>`coalesce(max(${events.seq}), 0)`.as("seq") }).from(events))
      const type = sql`json_extract(${events.event}, '$.type')`
      const notifiedAfter = native(
        db
          .select({
            seq: events.seq,
            schemaVersion: sql<number>`${events.schemaVersion}`.as("schemaVersion"),
            event: events.event,
            raw: events.raw
          })
          .from(events)
          .where(
            and(
              gt(events.seq, sql.placeholder("afterSeq")),
              sql`${type} in (${sql.join(
                NOTIFIED_TYPES.map((t) => sql`${t}`),
                sql`, `
              )})`
            )
          )
          .orderBy(asc(events.seq))
          .limit(sql.placeholder("limit"))
      )
      const sinkIds = native(
        db.select({ sinkId: sql<string>`${notificationSinks.sinkId}`.as("sinkId") }).from(notificationSinks)
      )
      const moveCursor = native(
        db
          .update(notificationCursor)
          .set({ afterSeq: sql`${sql.placeholder("afterSeq")}` })
          .where(eq(notificationCursor.id, 1))
      )
      const now = sql.placeholder("now")
      const due = native(
        db
          .select({
            notificationId: sql<string>`${notificationOutbox.notificationId}`.as("notificationId"),
            payload: notificationOutbox.payload,
            attempts: notificationOutbox.attempts,
            sinkId: sql<string>`${notificationSinks.sinkId}`.as("sinkId"),
            kind: notificationSinks.kind,
            endpoint: notificationSinks.endpoint,
            p256dh: notificationSinks.p256dh,
            auth: notificationSinks.auth,
            clientId: sql<string | null>`${notificationSinks.clientId}`.as("clientId"),
            createdAt: sql<string>`${notificationSinks.createdAt}`.as("createdAt")
          })
          .from(notificationOutbox)
          .innerJoin(notificationSinks, eq(notificationSinks.sinkId, notificationOutbox.sinkId))
          .where(
            and(
              eq(notificationOutbox.status, "pending"),
              lte(notificationOutbox.nextAttemptAt, now),
              or(isNull(notificationOutbox.claimedUntil), lte(notificationOutbox.claimedUntil, now))
            )
          )
          .orderBy(asc(notificationOutbox.seq), asc(notificationOutbox.notificationId))
          .limit(sql.placeholder("limit"))
      )
      const claimOne = native(
        db
          .update(notificationOutbox)
          .set({ claimedBy: sql`${sql.placeholder("replica")}`, claimedUntil: sql`${sql.placeholder("until")}` })
          .where(eq(notificationOutbox.notificationId, sql.placeholder("notificationId")))
      )

      const derive = sqlite.transaction((limit: number, nowMs: number): number => {
        const cursor = cursorOf.get<{ afterSeq: number }>({})
        if (cursor === undefined) {
          const last = lastSeq.get<{ seq: number }>({})
          db.insert(notificationCursor)
            .values({ id: 1, afterSeq: last?.seq ?? 0 })
            .run()
          return 0
        }
        type Row = { seq: number; schemaVersion: number; event: string; raw: string | null }
        const rows = notifiedAfter.all<Row>({ afterSeq: cursor.afterSeq, limit })
        const end = rows.length === limit ? rows.at(-1)!.seq : (lastSeq.get<{ seq: number }>({})?.seq ?? 0)
        const sinks = sinkIds.all<{ sinkId: string }>({}).map((s) => s.sinkId)
        let added = 0
        for (const row of rows)
          for (const outbox of outboxRowsOf(row.seq, decodePersistedEvent(row), sinks, nowMs))
            added += db.insert(notificationOutbox).values(outbox).onConflictDoNothing().run().changes
        moveCursor.run({ afterSeq: Math.max(cursor.afterSeq, end) })
        return added
      })

      type DueRow = Pick<typeof notificationOutbox.$inferSelect, "notificationId" | "payload" | "attempts"> &
        typeof notificationSinks.$inferSelect
      const claim = sqlite.transaction((replica: string, nowMs: number, leaseMs: number, limit: number) => {
        const rows = due.all<DueRow>({ now: nowMs, limit })
        for (const row of rows) claimOne.run({ replica, until: nowMs + leaseMs, notificationId: row.notificationId })
        return rows.map((row) => claimedOf(row, sinkOf(row)))
      })
      return { derive, claim }
    }
    let look: ReturnType<typeof prepareLook> | undefined
    const derive = (limit: number, nowMs: number): number => (look ??= prepareLook()).derive(limit, nowMs)
    const claim = (replica: string, nowMs: number, leaseMs: number, limit: number) =>
      (look ??= prepareLook()).claim(replica, nowMs, leaseMs, limit)

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
