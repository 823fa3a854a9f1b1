import { Schema } from "effect"
import { OptionId, PlanId, PromptId, RequestId, ThreadId, TurnId } from "./ids.ts"
import { UserInputAnswerEntry } from "./prompt.ts"
import { OperatingMode, ProviderCapabilities, ProviderKind } from "./provider.ts"
import { RuntimeEvent } from "./events.ts"
import { ClientId } from "./provenance.ts"
import { WaitPolicy } from "./waitPolicy.ts"
import { ThreadListEntry, ThreadSnapshot } from "./snapshot.ts"

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
