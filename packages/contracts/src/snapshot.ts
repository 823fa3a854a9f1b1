import { Schema } from "effect"
import { IsoDateTime, PlanId, PromptId, RequestId, ThreadId, TurnId } from "./ids.ts"
import { PlanSnapshot } from "./plan.ts"
import { PromptResolutionKind, UserInputAnswerEntry, UserInputPrompt } from "./prompt.ts"
import { OperatingMode, ProviderCapabilities, ProviderKind, TokenUsage } from "./provider.ts"
import { RequestOption } from "./events.ts"
import { ResolvedBy } from "./provenance.ts"

/**
 * What a client is given of a thread: its snapshot (turns, items, plans, prompts and requests as
 * views), pages of its history, and its summary and list entry. The frames that carry them are in
 * protocol.ts.
 */

export const TurnView = Schema.Struct({
  turnId: TurnId,
  status: Schema.Literals(["inProgress", "completed", "interrupted", "failed"]),
  mode: Schema.NullOr(OperatingMode),
  error: Schema.NullOr(Schema.Struct({ message: Schema.String, code: Schema.optionalKey(Schema.String) })),
  usage: Schema.NullOr(TokenUsage),
  startedAt: IsoDateTime,
  completedAt: Schema.NullOr(IsoDateTime)
})
export type TurnView = typeof TurnView.Type

export const ItemView = Schema.Struct({
  itemId: Schema.String,
  turnId: TurnId,
  itemType: Schema.String,
  status: Schema.String,
  title: Schema.NullOr(Schema.String),
  toolName: Schema.NullOr(Schema.String),
  text: Schema.String,
  startedAt: IsoDateTime,
  completedAt: Schema.NullOr(IsoDateTime)
})
export type ItemView = typeof ItemView.Type

export const PlanView = Schema.Struct({ turnId: TurnId, revision: Schema.Int, plan: PlanSnapshot })
export type PlanView = typeof PlanView.Type

export const ProposedPlanView = Schema.Struct({
  planId: PlanId,
  turnId: TurnId,
  status: Schema.String,
  streamedText: Schema.String,
  markdown: Schema.NullOr(Schema.String),
  filePath: Schema.NullOr(Schema.String),
  decision: Schema.NullOr(Schema.String),
  feedback: Schema.NullOr(Schema.String),
  editedMarkdown: Schema.NullOr(Schema.String),
  createdAt: IsoDateTime,
  /** Who or what decided or resolved it (provenance.ts); null while open, and for what was resolved before it was recorded. */
  resolvedBy: Schema.NullOr(ResolvedBy)
})
export type ProposedPlanView = typeof ProposedPlanView.Type

export const PromptView = Schema.Struct({
  promptId: PromptId,
  turnId: Schema.NullOr(TurnId),
  requestId: Schema.NullOr(RequestId),
  prompt: UserInputPrompt,
  status: Schema.Literals(["pending", "resolved"]),
  resolution: Schema.NullOr(PromptResolutionKind),
  /** Secret questions only as redaction markers. */
  answers: Schema.NullOr(Schema.Array(UserInputAnswerEntry)),
  reason: Schema.NullOr(Schema.String),
  createdAt: IsoDateTime,
  resolvedAt: Schema.NullOr(IsoDateTime),
  /** Who or what decided or resolved it (provenance.ts); null while open, and for what was resolved before it was recorded. */
  resolvedBy: Schema.NullOr(ResolvedBy)
})
export type PromptView = typeof PromptView.Type

export const RequestView = Schema.Struct({
  requestId: RequestId,
  turnId: Schema.NullOr(TurnId),
  kind: Schema.String,
  title: Schema.NullOr(Schema.String),
  detail: Schema.NullOr(Schema.String),
  /** The provider's own options, as it sent them: a client that loaded the thread later can answer. */
  options: Schema.Array(RequestOption),
  status: Schema.Literals(["pending", "resolved"]),
  resolution: Schema.NullOr(Schema.String),
  optionId: Schema.NullOr(Schema.String),
  promptId: Schema.NullOr(PromptId),
  planId: Schema.NullOr(PlanId),
  createdAt: IsoDateTime,
  /** Who or what decided or resolved it (provenance.ts); null while open, and for what was resolved before it was recorded. */
  resolvedBy: Schema.NullOr(ResolvedBy)
})
export type RequestView = typeof RequestView.Type

/**
 * There is history before a snapshot's or a page's turns, asked for with `before`. No count: it
 * would cost as much as the thread's history (issue 17).
 */
export const OlderTurns = Schema.Struct({ before: TurnId })
export type OlderTurns = typeof OlderTurns.Type

/**
 * Everything a client needs to render a thread, as of per-thread sequence `seq`: the events
 * that follow it apply on top. Lists are ordered by creation (time, then id). Sent over the
 * WebSocket, it is a window: the latest turns and what was created since the oldest of them
 * started, plus the prompts and requests still pending from before; `olderTurns` (null when
 * there is nothing before) says how to page back (PROTOCOL.md, "Snapshot window and history").
 */
export const ThreadSnapshot = Schema.Struct({
  threadId: ThreadId,
  provider: ProviderKind,
  seq: Schema.Int,
  state: Schema.String,
  flags: Schema.Array(Schema.String),
  mode: Schema.NullOr(OperatingMode),
  nativeMode: Schema.NullOr(Schema.String),
  model: Schema.NullOr(Schema.String),
  capabilities: Schema.NullOr(ProviderCapabilities),
  turns: Schema.Array(TurnView),
  items: Schema.Array(ItemView),
  /** The newest checklist snapshot of the thread. */
  latestPlan: Schema.NullOr(PlanView),
  /** Checklist revisions so far, per turn (the next snapshot of a turn is revision n + 1). */
  planRevisions: Schema.Record(Schema.String, Schema.Int),
  proposedPlans: Schema.Array(ProposedPlanView),
  prompts: Schema.Array(PromptView),
  requests: Schema.Array(RequestView),
  olderTurns: Schema.NullOr(OlderTurns)
})
export type ThreadSnapshot = typeof ThreadSnapshot.Type

/**
 * The result of `thread.history`: the history between the turn `olderTurns.before` of the next
 * page back (or the thread's start) and the turn the request named, as of the thread's `seq`.
 * Lists as in a snapshot; `planRevisions` for the page's turns.
 */
export const ThreadHistoryPage = Schema.Struct({
  threadId: ThreadId,
  seq: Schema.Int,
  turns: Schema.Array(TurnView),
  items: Schema.Array(ItemView),
  planRevisions: Schema.Record(Schema.String, Schema.Int),
  proposedPlans: Schema.Array(ProposedPlanView),
  prompts: Schema.Array(PromptView),
  requests: Schema.Array(RequestView),
  olderTurns: Schema.NullOr(OlderTurns)
})
export type ThreadHistoryPage = typeof ThreadHistoryPage.Type

export const ThreadSummary = Schema.Struct({
  threadId: ThreadId,
  provider: ProviderKind,
  state: Schema.String,
  mode: Schema.NullOr(OperatingMode),
  seq: Schema.Int,
  live: Schema.Boolean,
  updatedAt: IsoDateTime,
  /** When the thread was created (its first event). */
  createdAt: IsoDateTime,
  /** The working directory its session started in, when the thread recorded one. */
  cwd: Schema.optionalKey(Schema.String),
  /** Its first message, at most `THREAD_TITLE_CHARS` characters of it; absent before the first turn. */
  title: Schema.optionalKey(Schema.String),
  /** When it was archived (`thread.archive`); absent when it is not. */
  archivedAt: Schema.optionalKey(IsoDateTime)
})
export type ThreadSummary = typeof ThreadSummary.Type

/** How much of a thread's first message its summary carries as `title` (characters). */
export const THREAD_TITLE_CHARS = 200

/**
 * A thread in the followed thread list, with what waits on a person in it: its pending prompts,
 * and its pending requests that are not a prompt's transport (those show as their prompt).
 */
export const ThreadListEntry = Schema.Struct({
  thread: ThreadSummary,
  prompts: Schema.Array(PromptView),
  requests: Schema.Array(RequestView)
})
export type ThreadListEntry = typeof ThreadListEntry.Type
