import { Schema } from "effect"

/**
 * Identifiers. Every id is an opaque non-empty string; the brand keeps a turn id from being
 * passed where a thread id is expected. Native ids (Codex thread/turn/item ids, Claude tool-use
 * ids, ACP tool-call ids) are used as-is where they are unique in their scope, and real ACP
 * tool-call ids may contain a newline, so no character class is imposed beyond "not empty".
 */
const Id = Schema.String.check(Schema.isNonEmpty(), Schema.isMaxLength(512))
/** The longest id, in characters (UTF-16 code units), of every kind below. */
export const MAX_ID_CHARS = 512

export const ThreadId = Id.pipe(Schema.brand("ThreadId"))
export type ThreadId = typeof ThreadId.Type
export const TurnId = Id.pipe(Schema.brand("TurnId"))
export type TurnId = typeof TurnId.Type
export const ItemId = Id.pipe(Schema.brand("ItemId"))
export type ItemId = typeof ItemId.Type
/** Globally unique: a prompt is addressed by this id alone (operator API, answers). */
export const PromptId = Id.pipe(Schema.brand("PromptId"))
export type PromptId = typeof PromptId.Type
/** Globally unique: a transport-level request (approval, native server request). */
export const RequestId = Id.pipe(Schema.brand("RequestId"))
export type RequestId = typeof RequestId.Type
/** Globally unique; re-ingesting an event with a known id is a no-op. */
export const EventId = Id.pipe(Schema.brand("EventId"))
export type EventId = typeof EventId.Type
/** A proposed plan: Codex `<turnId>-plan` item, Claude ExitPlanMode tool use, Cursor create_plan call. */
export const PlanId = Id.pipe(Schema.brand("PlanId"))
export type PlanId = typeof PlanId.Type
export const QuestionId = Id.pipe(Schema.brand("QuestionId"))
export type QuestionId = typeof QuestionId.Type
export const OptionId = Id.pipe(Schema.brand("OptionId"))
export type OptionId = typeof OptionId.Type

/** ISO-8601 UTC timestamp, as produced by `Date.prototype.toISOString`. */
export const IsoDateTime = Schema.String.check(
  Schema.isPattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/u, {
    expected: "an ISO-8601 UTC timestamp such as 2026-11-30T12:00:00.000Z"
  })
)
export type IsoDateTime = typeof IsoDateTime.Type
