import { Schema } from "effect"
import { IsoDateTime, OptionId, PlanId, PromptId, RequestId, ThreadId, TurnId } from "./ids.ts"
import { PlanSnapshot } from "./plan.ts"
import { PromptResolutionKind, UserInputAnswerEntry, UserInputPrompt } from "./prompt.ts"
import { OperatingMode, ProviderCapabilities, ProviderKind, TokenUsage } from "./provider.ts"
import { RequestOption, RuntimeEvent } from "./events.ts"
import { ClientId, ResolvedBy } from "./provenance.ts"
import { WaitPolicy } from "./waitPolicy.ts"

/** Bumped on any incompatible change of the frames below. */
export const PROTOCOL_VERSION = 1

const ClientRequestId = Schema.String.check(Schema.isNonEmpty(), Schema.isMaxLength(200))

// ---- commands (client → server, inside a `command` frame) ----------------------------------

export const SessionStartCommand = Schema.Struct({
  type: Schema.tag("session.start"),
  provider: ProviderKind,
  cwd: Schema.String.check(Schema.isNonEmpty()),
  mode: OperatingMode,
  /** What the server does with a question of this session nobody answers; default the server's (`serve --wait-policy`). */
  waitPolicy: Schema.optionalKey(WaitPolicy)
})
export const TurnStartCommand = Schema.Struct({
  type: Schema.tag("turn.start"),
  threadId: ThreadId,
  text: Schema.String.check(Schema.isNonEmpty()),
  mode: Schema.optionalKey(OperatingMode)
})
export const TurnInterruptCommand = Schema.Struct({ type: Schema.tag("turn.interrupt"), threadId: ThreadId })
export const ModeSetCommand = Schema.Struct({ type: Schema.tag("mode.set"), threadId: ThreadId, mode: OperatingMode })
/** Idempotent by `clientRequestId`: a retry gets the first outcome again, the provider one answer. */
export const UserInputRespondCommand = Schema.Struct({
  type: Schema.tag("userInput.respond"),
  promptId: PromptId,
  answers: Schema.Array(UserInputAnswerEntry),
  clientRequestId: ClientRequestId
})
/** Resolves a prompt without answering: `empty` (skip) or `cancelled`. */
export const UserInputDismissCommand = Schema.Struct({
  type: Schema.tag("userInput.dismiss"),
  promptId: PromptId,
  resolution: Schema.Literals(["empty", "cancelled"]),
  clientRequestId: ClientRequestId
})
export const RequestRespondCommand = Schema.Struct({
  type: Schema.tag("request.respond"),
  requestId: RequestId,
  optionId: OptionId,
  clientRequestId: ClientRequestId
})
export const PlanDecideCommand = Schema.Struct({
  type: Schema.tag("plan.decide"),
  threadId: ThreadId,
  planId: PlanId,
  decision: Schema.Literals(["approved", "rejected", "edited"]),
  feedback: Schema.optionalKey(Schema.String),
  editedMarkdown: Schema.optionalKey(Schema.String),
  /**
   * Which of the agent's own review choices (the options of the plan's `plan_approval` request,
   * `supportsPlanOptions`): an `allow_*` option with `approved`, a `reject_*` one with `rejected`.
   * Absent: the agent's first option of that kind.
   */
  optionId: Schema.optionalKey(OptionId),
  clientRequestId: ClientRequestId
})
/**
 * How many of a thread's latest turns a snapshot carries (`window`) and a history page holds
 * (`limit`): the default, and the most a client may ask for. A snapshot's size then follows the
 * thread's live state and this bound, never the length of its history (issue 17).
 */
export const TURN_WINDOW = { default: 20, max: 200 } as const
const TurnCount = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: TURN_WINDOW.max }))

/**
 * Without `afterSeq` (or with one too old) the server sends a snapshot first, then events after
 * it; the snapshot holds the latest `window` turns (default `TURN_WINDOW.default`), older ones
 * come from `thread.history`.
 */
export const ThreadSubscribeCommand = Schema.Struct({
  type: Schema.tag("thread.subscribe"),
  threadId: ThreadId,
  afterSeq: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  window: Schema.optionalKey(TurnCount)
})
/**
 * The `limit` turns before the turn `before` (a snapshot's or a page's `olderTurns.before`),
 * with what they hold: a `ThreadHistoryPage`. An id that is not a turn of the thread is
 * refused `invalid_cursor`.
 */
export const ThreadHistoryCommand = Schema.Struct({
  type: Schema.tag("thread.history"),
  threadId: ThreadId,
  before: TurnId,
  limit: Schema.optionalKey(TurnCount)
})
export const ThreadUnsubscribeCommand = Schema.Struct({ type: Schema.tag("thread.unsubscribe"), threadId: ThreadId })
export const ThreadsListCommand = Schema.Struct({ type: Schema.tag("threads.list") })
/**
 * Attaches a new provider session to a thread whose session is not live (the server restarted,
 * the provider exited), resuming the provider's own conversation; without `mode`, the thread's last mode.
 */
export const ThreadResumeCommand = Schema.Struct({
  type: Schema.tag("thread.resume"),
  threadId: ThreadId,
  mode: Schema.optionalKey(OperatingMode)
})

/**
 * Follows the thread list: the result holds every thread with what waits on a person in it
 * (`ThreadListEntry`), then a `threadEntry` frame brings a thread's entry again each time it
 * was created, its state, mode or liveness changed, a turn started or ended, or a prompt or
 * request opened or was resolved. `threads.unsubscribe` stops it.
 */
export const ThreadsSubscribeCommand = Schema.Struct({ type: Schema.tag("threads.subscribe") })
export const ThreadsUnsubscribeCommand = Schema.Struct({ type: Schema.tag("threads.unsubscribe") })
/**
 * Files a thread away (`archived`, default true) or back (`archived: false`). Archiving changes
 * nothing in the thread: its session, prompts and history stay; lists say `archivedAt` and a
 * client hides it by default. Idempotent: archiving an archived thread keeps its first time.
 */
export const ThreadArchiveCommand = Schema.Struct({
  type: Schema.tag("thread.archive"),
  threadId: ThreadId,
  archived: Schema.optionalKey(Schema.Boolean)
})

export const Command = Schema.Union([
  SessionStartCommand,
  TurnStartCommand,
  TurnInterruptCommand,
  ModeSetCommand,
  UserInputRespondCommand,
  UserInputDismissCommand,
  RequestRespondCommand,
  PlanDecideCommand,
  ThreadSubscribeCommand,
  ThreadHistoryCommand,
  ThreadUnsubscribeCommand,
  ThreadsListCommand,
  ThreadResumeCommand,
  ThreadsSubscribeCommand,
  ThreadsUnsubscribeCommand,
  ThreadArchiveCommand
])
export type Command = typeof Command.Type

// ---- client frames -------------------------------------------------------------------------

/** First frame. Browsers cannot set headers on a WebSocket, so they send the token here. */
export const HelloFrame = Schema.Struct({
  type: Schema.tag("hello"),
  protocolVersion: Schema.Int,
  token: Schema.optionalKey(Schema.String),
  client: Schema.optionalKey(Schema.String),
  /**
   * The client's own id, stable per browser or device (the client library keeps one): resolutions
   * this connection makes record it (`resolvedBy.clientId`), so a page can say "answered by you
   * on this browser".
   */
  clientId: Schema.optionalKey(ClientId)
})
export const CommandFrame = Schema.Struct({
  type: Schema.tag("command"),
  /** Echoed on the result or error, for correlation. */
  id: Schema.String.check(Schema.isNonEmpty(), Schema.isMaxLength(200)),
  command: Command
})
export const ClientFrame = Schema.Union([HelloFrame, CommandFrame])
export type ClientFrame = typeof ClientFrame.Type

// ---- thread snapshot -----------------------------------------------------------------------

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

// ---- server frames -------------------------------------------------------------------------

/** Whether a provider can start a session with the credentials it found, and how it is logged in. */
export const ProviderAuthStatus = Schema.Literals(["authenticated", "unauthenticated", "unknown"])
export type ProviderAuthStatus = typeof ProviderAuthStatus.Type

export const ProviderAuth = Schema.Struct({
  status: ProviderAuthStatus,
  /** How it is logged in: `apiKey`, `chatgpt`, `oauth`, an ACP auth method id, … (open). */
  method: Schema.optionalKey(Schema.String),
  /** A human-readable account or method description, never a secret. */
  label: Schema.optionalKey(Schema.String),
  /** What the user can do about it, e.g. `run codex login`. */
  hint: Schema.optionalKey(Schema.String)
})
export type ProviderAuth = typeof ProviderAuth.Type

export const ProviderInfo = Schema.Struct({
  provider: ProviderKind,
  capabilities: ProviderCapabilities,
  /** A display name for pickers (`Codex`, `Claude`, an ACP agent's announced name). */
  label: Schema.optionalKey(Schema.String),
  /** False when a session would fail to start (e.g. not logged in); `auth.hint` says why. */
  ready: Schema.optionalKey(Schema.Boolean),
  auth: Schema.optionalKey(ProviderAuth),
  /** True for a demo provider: the real program against Planbridge's own scripted model. */
  demo: Schema.optionalKey(Schema.Boolean)
})
export type ProviderInfo = typeof ProviderInfo.Type

/** Bounds a client needs before it sends: a command frame above `maxFrameBytes` (UTF-8) is refused. */
export const ServerLimits = Schema.Struct({ maxFrameBytes: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)) })
export type ServerLimits = typeof ServerLimits.Type

export const WelcomeFrame = Schema.Struct({
  type: Schema.tag("welcome"),
  protocolVersion: Schema.Int,
  providers: Schema.Array(ProviderInfo),
  /** Absent from servers older than it: a client then learns the limit from a `frame_too_large`. */
  limits: Schema.optionalKey(ServerLimits)
})

/**
 * Why a frame or command was refused. Clients branch on `code`; `path` points into the frame
 * for schema errors.
 */
export const ErrorCode = Schema.Literals([
  "bad_json",
  "invalid_frame",
  "frame_too_large",
  "unauthorized",
  "protocol_version",
  "unknown_provider",
  /** The provider is installed but not logged in; the message carries its hint (`run codex login`). */
  "auth_required",
  "unknown_thread",
  /** `thread.history`'s `before` is not a turn of the thread. */
  "invalid_cursor",
  "unknown_prompt",
  "unknown_request",
  "already_resolved",
  "client_request_conflict",
  "invalid_answer",
  "session_not_live",
  "busy",
  "unsupported",
  "provider_error",
  "resume_failed",
  "internal"
])
export type ErrorCode = typeof ErrorCode.Type

export const ErrorInfo = Schema.Struct({
  code: ErrorCode,
  message: Schema.String,
  path: Schema.optionalKey(Schema.Array(Schema.Union([Schema.String, Schema.Finite])))
})
export type ErrorInfo = typeof ErrorInfo.Type

export const ResultFrame = Schema.Struct({ type: Schema.tag("result"), id: Schema.String, result: Schema.Json })
export const ErrorFrame = Schema.Struct({
  type: Schema.tag("error"),
  id: Schema.NullOr(Schema.String),
  error: ErrorInfo
})
export const SnapshotFrame = Schema.Struct({
  type: Schema.tag("snapshot"),
  threadId: ThreadId,
  snapshot: ThreadSnapshot
})
/** One committed event, with its per-thread sequence; gap-free and in order per thread. */
export const EventFrame = Schema.Struct({
  type: Schema.tag("event"),
  threadId: ThreadId,
  seq: Schema.Int,
  event: RuntimeEvent
})

/** A thread's entry in the followed thread list (`threads.subscribe`), replacing the one before. */
export const ThreadEntryFrame = Schema.Struct({ type: Schema.tag("threadEntry"), entry: ThreadListEntry })

export const ServerFrame = Schema.Union([
  WelcomeFrame,
  ResultFrame,
  ErrorFrame,
  SnapshotFrame,
  EventFrame,
  ThreadEntryFrame
])
export type ServerFrame = typeof ServerFrame.Type
