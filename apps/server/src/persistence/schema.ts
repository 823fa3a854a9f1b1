import { sql } from "drizzle-orm"
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core"
import {
  ITEM_FIELDS,
  PROMPT_FIELDS,
  PROPOSED_PLAN_FIELDS,
  REQUEST_FIELDS,
  sqliteRowJson,
  TURN_FIELDS
} from "./SnapshotRowJson.ts"

/** The notification tables (issue 29) live in their own file. */
export * from "./notificationTables.ts"

/**
 * The append-only event log: the source of truth. Every other table is a projection of it and
 * can be rebuilt from it (`planbridge rebuild`). `seq` is the global order, `thread_seq` the
 * gap-free order within a thread that clients resume from. Nothing but what reads need is kept
 * outside the JSON: every column and index is paid on every append (type, provider, turn and
 * item ids, time are in `event`; `json_extract` reaches them for the rare query).
 */
export const events = sqliteTable(
  "events",
  {
    seq: integer("seq").primaryKey(),
    eventId: text("event_id").notNull(),
    threadId: text("thread_id").notNull(),
    threadSeq: integer("thread_seq").notNull(),
    /** Version of the canonical event shape the row was written with; older rows are upgraded on read. */
    schemaVersion: integer("schema_version").notNull(),
    /** The canonical event without `raw`, as JSON. */
    event: text("event").notNull(),
    /** The raw native payload, as JSON, or null. */
    raw: text("raw")
  },
  (t) => [uniqueIndex("events_event_id").on(t.eventId), uniqueIndex("events_thread_seq").on(t.threadId, t.threadSeq)]
)

export const threads = sqliteTable("threads", {
  threadId: text("thread_id").primaryKey(),
  provider: text("provider").notNull(),
  state: text("state").notNull(),
  flags: text("flags").notNull(),
  mode: text("mode"),
  nativeMode: text("native_mode"),
  model: text("model"),
  capabilities: text("capabilities"),
  cwd: text("cwd"),
  nativeThreadId: text("native_thread_id"),
  nativeSessionId: text("native_session_id"),
  providerVersion: text("provider_version"),
  exit: text("exit"),
  lastSeq: integer("last_seq").notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull()
})

export const turns = sqliteTable(
  "turns",
  {
    threadId: text("thread_id")
      .notNull()
      .references(() => threads.threadId),
    turnId: text("turn_id").notNull(),
    status: text("status").notNull(),
    mode: text("mode"),
    error: text("error"),
    usage: text("usage"),
    durationMs: integer("duration_ms"),
    startedAt: text("started_at").notNull(),
    completedAt: text("completed_at"),
    /** The row as a snapshot lists it, written by SQLite with the row (SnapshotRowJson.ts). */
    json: text("json").notNull().generatedAlwaysAs(sqliteRowJson(TURN_FIELDS), { mode: "stored" })
  },
  // Turns in their listed order: the snapshot window and history pages are ranges of it (issue 17).
  (t) => [
    primaryKey({ columns: [t.threadId, t.turnId] }),
    index("turns_thread_start").on(t.threadId, t.startedAt, t.turnId)
  ]
)

export const items = sqliteTable(
  "items",
  {
    threadId: text("thread_id")
      .notNull()
      .references(() => threads.threadId),
    itemId: text("item_id").notNull(),
    turnId: text("turn_id").notNull(),
    itemType: text("item_type").notNull(),
    status: text("status").notNull(),
    title: text("title"),
    toolName: text("tool_name"),
    /** Streamed text so far; replaced by the authoritative text when the item completes. */
    text: text("text").notNull(),
    data: text("data"),
    startedAt: text("started_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    completedAt: text("completed_at"),
    /** The row as a snapshot lists it, written by SQLite with the row (SnapshotRowJson.ts). */
    json: text("json").notNull().generatedAlwaysAs(sqliteRowJson(ITEM_FIELDS), { mode: "stored" })
  },
  // No (thread, turn) index (it cost a page write per batch and thread); the snapshot window and
  // history pages read a range of (thread, start, id) instead, appended at its end (issue 17).
  (t) => [
    // An item is keyed within its turn: providers promise item ids unique only within a turn or
    // a session, not for a thread's whole life (EVENTS.md, "Ids"; issue 34).
    primaryKey({ columns: [t.threadId, t.turnId, t.itemId] }),
    index("items_thread_start").on(t.threadId, t.startedAt, t.itemId)
  ]
)

/**
 * Text streamed into an item since its text was last replaced, one row per ingestion batch and
 * item, so that a delta costs an insert of its own size instead of a rewrite of the whole text
 * (quadratic over a long message). An item's text is `items.text` followed by its chunks in
 * `first_seq` order; a replacing text (completion) deletes them.
 */
export const itemTextChunks = sqliteTable(
  "item_text_chunks",
  {
    threadId: text("thread_id").notNull(),
    /** The turn of the chunk's item (items are keyed within their turn). */
    turnId: text("turn_id").notNull(),
    itemId: text("item_id").notNull(),
    /** The thread sequence of the chunk's first delta. */
    firstSeq: integer("first_seq").notNull(),
    text: text("text").notNull()
  },
  (t) => [primaryKey({ columns: [t.threadId, t.turnId, t.itemId, t.firstSeq] })]
)

/** Every checklist revision is kept; `is_latest` marks the newest of its turn. */
export const planSnapshots = sqliteTable(
  "plan_snapshots",
  {
    threadId: text("thread_id")
      .notNull()
      .references(() => threads.threadId),
    turnId: text("turn_id").notNull(),
    revision: integer("revision").notNull(),
    explanation: text("explanation"),
    steps: text("steps").notNull(),
    source: text("source").notNull(),
    isLatest: integer("is_latest", { mode: "boolean" }).notNull(),
    eventId: text("event_id").notNull(),
    createdAt: text("created_at").notNull()
  },
  // (thread, rowid): a thread's revision projected last is the snapshot's `latestPlan` (ThreadSnapshots.ts).
  (t) => [primaryKey({ columns: [t.threadId, t.turnId, t.revision] }), index("plan_snapshots_thread").on(t.threadId)]
)

export const proposedPlans = sqliteTable(
  "proposed_plans",
  {
    planId: text("plan_id").primaryKey(),
    threadId: text("thread_id")
      .notNull()
      .references(() => threads.threadId),
    turnId: text("turn_id").notNull(),
    status: text("status").notNull(),
    streamedText: text("streamed_text").notNull(),
    markdown: text("markdown"),
    filePath: text("file_path"),
    title: text("title"),
    decision: text("decision"),
    feedback: text("feedback"),
    editedMarkdown: text("edited_markdown"),
    /** Who or what decided or resolved it (contracts' `ResolvedBy`), as JSON; null before then. */
    resolvedBy: text("resolved_by"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    /** The row as a snapshot lists it, written by SQLite with the row (SnapshotRowJson.ts). */
    json: text("json").notNull().generatedAlwaysAs(sqliteRowJson(PROPOSED_PLAN_FIELDS), { mode: "stored" })
  },
  // No (thread, turn) index: no query reads one (migration 0011 dropped it); every thread read is a range of this one.
  (t) => [index("proposed_plans_thread_created").on(t.threadId, t.createdAt, t.planId)]
)

export const prompts = sqliteTable(
  "prompts",
  {
    promptId: text("prompt_id").primaryKey(),
    threadId: text("thread_id")
      .notNull()
      .references(() => threads.threadId),
    turnId: text("turn_id"),
    provider: text("provider").notNull(),
    requestId: text("request_id"),
    /** The whole canonical prompt (questions, options, source, blocking) as JSON. */
    prompt: text("prompt").notNull(),
    blocking: integer("blocking", { mode: "boolean" }).notNull(),
    source: text("source").notNull(),
    status: text("status").notNull(),
    resolution: text("resolution"),
    /** Answers as stored: secret questions only as redaction markers. */
    answers: text("answers"),
    reason: text("reason"),
    requestedEventId: text("requested_event_id").notNull(),
    resolvedEventId: text("resolved_event_id"),
    /** Who or what decided or resolved it (contracts' `ResolvedBy`), as JSON; null before then. */
    resolvedBy: text("resolved_by"),
    createdAt: text("created_at").notNull(),
    resolvedAt: text("resolved_at"),
    /** The row as a snapshot lists it, written by SQLite with the row (SnapshotRowJson.ts). */
    json: text("json").notNull().generatedAlwaysAs(sqliteRowJson(PROMPT_FIELDS), { mode: "stored" })
  },
  (t) => [
    index("prompts_status").on(t.status, t.createdAt),
    // A thread's open prompts, for the snapshot window (ThreadHistory.ts): only pending rows are in it.
    index("prompts_thread_pending")
      .on(t.threadId, t.createdAt, t.promptId)
      .where(sql`status = 'pending'`),
    index("prompts_thread").on(t.threadId, t.createdAt, t.promptId)
  ]
)

export const requests = sqliteTable(
  "requests",
  {
    requestId: text("request_id").primaryKey(),
    threadId: text("thread_id")
      .notNull()
      .references(() => threads.threadId),
    turnId: text("turn_id"),
    kind: text("kind").notNull(),
    title: text("title"),
    detail: text("detail"),
    options: text("options").notNull(),
    nativeMethod: text("native_method").notNull(),
    nativeId: text("native_id").notNull(),
    promptId: text("prompt_id"),
    planId: text("plan_id"),
    status: text("status").notNull(),
    resolution: text("resolution"),
    optionId: text("option_id"),
    /** Who or what decided or resolved it (contracts' `ResolvedBy`), as JSON; null before then. */
    resolvedBy: text("resolved_by"),
    openedEventId: text("opened_event_id").notNull(),
    createdAt: text("created_at").notNull(),
    resolvedAt: text("resolved_at"),
    /** The row as a snapshot lists it, written by SQLite with the row (SnapshotRowJson.ts). */
    json: text("json").notNull().generatedAlwaysAs(sqliteRowJson(REQUEST_FIELDS), { mode: "stored" })
  },
  (t) => [
    index("requests_status").on(t.status),
    index("requests_thread").on(t.threadId, t.createdAt, t.requestId),
    // A thread's open requests, for the snapshot window (ThreadHistory.ts): only pending rows are in it.
    index("requests_thread_pending")
      .on(t.threadId, t.createdAt, t.requestId)
      .where(sql`status = 'pending'`)
  ]
)

/**
 * Outcomes of answer-like commands by the client's request id, so that a retry (after a lost
 * reply, a reconnect or a server restart) gets the first outcome again and sends nothing. Not a
 * projection: it is not rebuilt from the log. `command`, `target` and `fingerprint` say what the
 * id was first used for, so that the id reused for anything else is refused instead of being
 * handed that outcome; rows written before they existed have them null (only `outcome`'s ids).
 */
export const clientRequests = sqliteTable("client_requests", {
  clientRequestId: text("client_request_id").primaryKey(),
  outcome: text("outcome").notNull(),
  createdAt: text("created_at").notNull(),
  /** The command type, e.g. `userInput.respond`. */
  command: text("command"),
  /** The prompt, request or plan id the command was for. */
  target: text("target"),
  /** Salted SHA-256 (hex) of the canonical command: equal for a retry, never the answer itself. */
  fingerprint: text("fingerprint")
})

/** The tables `planbridge rebuild` drops and replays; the event log is never among them. */
export const projectionTables = [threads, turns, items, planSnapshots, proposedPlans, prompts, requests] as const

/**
 * Threads a person filed away (`thread.archive`, issue 27): what they did to the list, not
 * something that happened in a thread, so not in the log and not a projection. A rebuild leaves
 * it alone, which is also why it has no foreign key to `threads` (a rebuild empties that table
 * and fills it again). Unarchiving deletes the row.
 */
export const archivedThreads = sqliteTable("archived_threads", {
  threadId: text("thread_id").primaryKey(),
  archivedAt: text("archived_at").notNull()
})

/**
 * A thread's provider state, captured from its provider home (Codex's rollout, Claude's session
 * log) so that a server whose data dir lacks the home can resume the thread (issue 32): gzip'd,
 * sealed with the deployment's token (ProviderStates.ts), never in clear. `fence` is the lease
 * fence it was captured under: a capture under an older lease does not replace a newer one. Not a
 * projection: a rebuild leaves it alone.
 */
export const providerStates = sqliteTable("provider_states", {
  threadId: text("thread_id").primaryKey(),
  provider: text("provider").notNull(),
  sealed: text("sealed").notNull(),
  /** The captured files' total size before compression, in bytes (bounded). */
  bytes: integer("bytes").notNull(),
  fence: integer("fence").notNull(),
  capturedAt: text("captured_at").notNull()
})

/**
 * How far the projections have applied the log (SqliteEventLog.ts): every event with `seq` up to
 * this is in the projection tables, written in the same transaction as this row; the events past
 * it are projected on start-up, before any read, and when the lag reaches its bound. One row.
 */
export const projectionWatermark = sqliteTable("projection_watermark", {
  id: integer("id").primaryKey(),
  seq: integer("seq").notNull()
})
