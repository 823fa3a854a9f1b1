import { IsoDateTime, ResolvedBy, type RuntimeEvent } from "@planbridge/contracts"
import { Schema } from "effect"

/**
 * The append-only trail of who resolved what (issue 29): every `user-input.resolved`,
 * `request.resolved` and `plan.decision` in the log, in log order, as the operator API
 * (`GET /api/resolutions`) and `planbridge prompts audit` give it. An entry never carries an
 * answer (a secret one could be among them): what was resolved, how, by whom, when.
 */
export const AuditEntry = Schema.Struct({
  seq: Schema.Int,
  threadId: Schema.String,
  provider: Schema.String,
  at: IsoDateTime,
  /** What ended: a prompt, a native request, or a proposed plan (its decision). */
  target: Schema.Literals(["prompt", "request", "plan"]),
  id: Schema.String,
  /** The resolution kind, or the plan's decision (`approved`, `rejected`, `edited`). */
  resolution: Schema.String,
  /** Null for what was resolved before provenance was recorded. */
  resolvedBy: Schema.NullOr(ResolvedBy)
})
export type AuditEntry = typeof AuditEntry.Type

/** One page of the trail; `nextAfterSeq` asks for the next one, null at the end of the log. */
export const AuditPage = Schema.Struct({
  entries: Schema.Array(AuditEntry),
  nextAfterSeq: Schema.NullOr(Schema.Int)
})
export type AuditPage = typeof AuditPage.Type

export interface AuditQuery {
  /** Entries after this log position (a page's `nextAfterSeq`); 0 from the start. */
  readonly afterSeq: number
  /** Only entries at or after this time. */
  readonly since?: string
  /** Log events looked at per page, at most `AUDIT_PAGE_MAX`. */
  readonly limit: number
}

export const AUDIT_PAGE_DEFAULT = 500
export const AUDIT_PAGE_MAX = 5_000

/** The event types the trail is made of. */
export const AUDITED_TYPES = ["user-input.resolved", "request.resolved", "plan.decision"] as const

/** A logged event as an entry of the trail; undefined for any other event. */
export const auditEntryOf = (seq: number, event: RuntimeEvent): AuditEntry | undefined => {
  const entry = (target: AuditEntry["target"], id: string, resolution: string, by: ResolvedBy | undefined) => ({
    seq,
    threadId: event.threadId,
    provider: event.provider,
    at: event.createdAt,
    target,
    id,
    resolution,
    resolvedBy: by ?? null
  })
  switch (event.type) {
    case "user-input.resolved":
      return entry("prompt", event.payload.promptId, event.payload.resolution, event.payload.resolvedBy)
    case "request.resolved":
      return entry("request", event.payload.requestId, event.payload.resolution, event.payload.resolvedBy)
    case "plan.decision":
      return entry("plan", event.payload.planId, event.payload.decision, event.payload.resolvedBy)
    default:
      return undefined
  }
}

/**
 * A page from the logged events a query found (in log order, `scanned` of them, the candidates
 * of at most `limit` rows): the audited ones at or after `since`, and where to go on from.
 */
export const auditPageOf = (
  rows: ReadonlyArray<{ readonly seq: number; readonly event: RuntimeEvent }>,
  query: AuditQuery
): AuditPage => {
  const entries = rows.flatMap(({ seq, event }) => {
    const entry = auditEntryOf(seq, event)
    return entry === undefined || (query.since !== undefined && entry.at < query.since) ? [] : [entry]
  })
  const last = rows.at(-1)
  return { entries, nextAfterSeq: rows.length < query.limit || last === undefined ? null : last.seq }
}
