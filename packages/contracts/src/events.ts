import { Schema } from "effect"
import { EventId, IsoDateTime, ItemId, OptionId, PlanId, PromptId, RequestId, ThreadId, TurnId } from "./ids.ts"
import { PlanDecisionKind, PlanSnapshot } from "./plan.ts"
import { PromptResolutionKind, UserInputAnswerEntry, UserInputPrompt } from "./prompt.ts"
import { ResolvedBy } from "./provenance.ts"
import { OperatingMode, ProviderCapabilities, ProviderKind, TokenUsage } from "./provider.ts"

/**
 * The native message an event came from, kept verbatim next to it so that a later adapter can
 * refine the mapping and an operator can see what the provider really sent. `source` names the
 * channel (`codex.app-server.notification`, `claude.sdk.message`, `acp.request`, `planbridge`
 * for events Planbridge itself synthesizes, …); `method` the JSON-RPC method or message type.
 */
export const RawNative = Schema.Struct({
  source: Schema.String.check(Schema.isNonEmpty()),
  method: Schema.optionalKey(Schema.String),
  payload: Schema.Json
})
export type RawNative = typeof RawNative.Type

const Envelope = {
  eventId: EventId,
  provider: ProviderKind,
  threadId: ThreadId,
  turnId: Schema.optionalKey(TurnId),
  itemId: Schema.optionalKey(ItemId),
  createdAt: IsoDateTime,
  raw: Schema.optionalKey(RawNative)
} as const

const TurnEnvelope = { ...Envelope, turnId: TurnId } as const
const ItemEnvelope = { ...Envelope, turnId: TurnId, itemId: ItemId } as const

/** A thread-scoped event. */
function event<const T extends string, const P extends Schema.Struct.Fields>(type: T, payload: P) {
  return Schema.Struct({ type: Schema.tag(type), ...Envelope, payload: Schema.Struct(payload) })
}

/** An event that always belongs to a turn. */
function turnEvent<const T extends string, const P extends Schema.Struct.Fields>(type: T, payload: P) {
  return Schema.Struct({ type: Schema.tag(type), ...TurnEnvelope, payload: Schema.Struct(payload) })
}

/** An event that always belongs to an item of a turn. */
function itemEvent<const T extends string, const P extends Schema.Struct.Fields>(type: T, payload: P) {
  return Schema.Struct({ type: Schema.tag(type), ...ItemEnvelope, payload: Schema.Struct(payload) })
}

const ErrorInfo = Schema.Struct({ message: Schema.String, code: Schema.optionalKey(Schema.String) })

// ---- session -------------------------------------------------------------------------------

export const SessionStarted = event("session.started", {
  cwd: Schema.optionalKey(Schema.String),
  resumed: Schema.Boolean,
  /** Native identities, so an operator can find the session on the provider's side. */
  nativeThreadId: Schema.optionalKey(Schema.String),
  nativeSessionId: Schema.optionalKey(Schema.String),
  providerVersion: Schema.optionalKey(Schema.String),
  /** On a resume (`thread.resume`): the native thread or session id this session continues. */
  resumedFrom: Schema.optionalKey(Schema.String),
  /**
   * The directory holding the provider's own state for this thread (Codex `CODEX_HOME`, Claude's
   * `HOME`), recorded by Planbridge so that a resume runs on the same one. A path, never a secret.
   */
  providerHome: Schema.optionalKey(Schema.String)
})

/**
 * A configuration layer a session inherited from the user's setup, so that an operator sees why a
 * tool or an MCP server is, or is not, there. Codex: the app-server's `config/read` layers
 * (`sessionFlags`, `project`, `user`, `system`); Claude: the setting sources it loaded (`user`,
 * `project`, `local`) and the MCP servers `system/init` reported, by their scope.
 */
export const ConfigLayer = Schema.Struct({
  /** The provider's name for the layer. */
  name: Schema.String,
  /** The file it was read from, when the provider says. */
  file: Schema.optionalKey(Schema.String),
  /** The MCP servers this layer defines or loaded (names only, never their settings). */
  mcpServers: Schema.optionalKey(Schema.Array(Schema.String))
})
export type ConfigLayer = typeof ConfigLayer.Type

/**
 * Where a session's permission setting came from: the user's own provider configuration (user
 * credentials mode), an option the server was started with, Planbridge's documented default, or
 * the mode itself (plan mode runs read-only).
 */
export const PermissionSource = Schema.Literals(["user_config", "server_option", "planbridge_default", "mode"])
export type PermissionSource = typeof PermissionSource.Type

/**
 * What a session runs with in one mode, as the provider names it (Codex: approval policy
 * `untrusted | on-request | never | granular`, sandbox `read-only | workspace-write |
 * danger-full-access`), and why: said at session start so nobody has to guess what changed.
 */
export const ModePermissions = Schema.Struct({
  mode: OperatingMode,
  approvalPolicy: Schema.String,
  approvalPolicySource: PermissionSource,
  sandbox: Schema.String,
  sandboxSource: PermissionSource,
  /** One sentence for a person: what was kept or set, and why. */
  reason: Schema.String
})
export type ModePermissions = typeof ModePermissions.Type

export const SessionConfigured = event("session.configured", {
  capabilities: ProviderCapabilities,
  mode: OperatingMode,
  /** The provider's own name for the mode (`plan`, `acceptEdits`, `read-only`, …). */
  nativeMode: Schema.optionalKey(Schema.String),
  model: Schema.NullOr(Schema.String),
  /** The layers inherited in `user` credentials mode; absent for an isolated session. */
  configLayers: Schema.optionalKey(Schema.Array(ConfigLayer)),
  /** Per mode, the approval policy and sandbox the session runs with and why (Codex). */
  permissions: Schema.optionalKey(Schema.Array(ModePermissions))
})

export const SessionState = Schema.Literals(["starting", "idle", "running", "waiting", "stopped", "error"])
export type SessionState = typeof SessionState.Type

export const SessionStateChanged = event("session.state.changed", {
  state: SessionState,
  /** Native activity flags, e.g. Codex `waitingOnUserInput`, `waitingOnApproval`. */
  flags: Schema.Array(Schema.String),
  detail: Schema.optionalKey(Schema.String)
})

export const SessionExited = event("session.exited", {
  exitKind: Schema.Literals(["graceful", "crashed", "killed", "server_restarted", "server_stopped"]),
  exitCode: Schema.NullOr(Schema.Finite),
  signal: Schema.NullOr(Schema.String),
  message: Schema.optionalKey(Schema.String)
})

export const ModeChanged = event("mode.changed", {
  mode: OperatingMode,
  nativeMode: Schema.optionalKey(Schema.String)
})

export const CapabilitiesChanged = event("capabilities.changed", { capabilities: ProviderCapabilities })

// ---- turns and items -----------------------------------------------------------------------

export const TurnStarted = turnEvent("turn.started", { mode: Schema.optionalKey(OperatingMode) })

export const TurnStatus = Schema.Literals(["completed", "interrupted", "failed"])
export type TurnStatus = typeof TurnStatus.Type

export const TurnCompleted = turnEvent("turn.completed", {
  status: TurnStatus,
  error: Schema.optionalKey(ErrorInfo),
  usage: Schema.optionalKey(TokenUsage),
  durationMs: Schema.optionalKey(Schema.Finite)
})

export const ItemType = Schema.Literals([
  "user_message",
  "assistant_message",
  "reasoning",
  "plan",
  "tool_call",
  "command",
  "file_change",
  "other"
])
export type ItemType = typeof ItemType.Type

export const ItemStatus = Schema.Literals(["inProgress", "completed", "failed", "declined"])
export type ItemStatus = typeof ItemStatus.Type

const ItemFields = {
  itemType: ItemType,
  status: ItemStatus,
  title: Schema.optionalKey(Schema.String),
  /** For text items: the full text so far; on `item.completed` the authoritative text. */
  text: Schema.optionalKey(Schema.String),
  /** Native tool name (`Bash`, `update_plan`, ACP `kind`), never used to classify prompts. */
  toolName: Schema.optionalKey(Schema.String),
  data: Schema.optionalKey(Schema.Json)
} as const

export const ItemStarted = itemEvent("item.started", ItemFields)
export const ItemUpdated = itemEvent("item.updated", ItemFields)
export const ItemCompleted = itemEvent("item.completed", ItemFields)

export const StreamKind = Schema.Literals(["assistant_text", "reasoning_text", "plan_text", "tool_output"])
export type StreamKind = typeof StreamKind.Type

export const ContentDelta = itemEvent("content.delta", { streamKind: StreamKind, delta: Schema.String })

// ---- plans ---------------------------------------------------------------------------------

export const TurnPlanUpdated = turnEvent("turn.plan.updated", { plan: PlanSnapshot })

export const PlanProposedDelta = turnEvent("plan.proposed.delta", { planId: PlanId, delta: Schema.String })

export const PlanProposedCompleted = turnEvent("plan.proposed.completed", {
  planId: PlanId,
  /** Authoritative: replaces whatever the deltas added up to. */
  markdown: Schema.String,
  filePath: Schema.optionalKey(Schema.String),
  title: Schema.optionalKey(Schema.String)
})

export const PlanDecision = turnEvent("plan.decision", {
  planId: PlanId,
  decision: PlanDecisionKind,
  /** Why it was rejected; reaches the model. */
  feedback: Schema.optionalKey(Schema.String),
  /** With `edited`: the plan the user approved instead. */
  editedMarkdown: Schema.optionalKey(Schema.String),
  /** Who decided, and how it came in (provenance.ts); absent on events written before it existed. */
  resolvedBy: Schema.optionalKey(ResolvedBy)
})

// ---- requests and prompts ------------------------------------------------------------------

export const RequestKind = Schema.Literals(["approval", "user_input", "plan_approval"])
export type RequestKind = typeof RequestKind.Type

export const RequestOption = Schema.Struct({
  id: OptionId,
  label: Schema.String,
  kind: Schema.optionalKey(Schema.Literals(["allow_once", "allow_always", "reject_once", "reject_always", "other"]))
})
export type RequestOption = typeof RequestOption.Type

/** Where the answer goes: the JSON-RPC id (or SDK tool-use id) of the request that asked. */
export const NativeRequestRef = Schema.Struct({
  method: Schema.String,
  id: Schema.Union([Schema.String, Schema.Finite])
})
export type NativeRequestRef = typeof NativeRequestRef.Type

export const RequestOpened = event("request.opened", {
  requestId: RequestId,
  requestKind: RequestKind,
  title: Schema.optionalKey(Schema.String),
  detail: Schema.optionalKey(Schema.String),
  options: Schema.Array(RequestOption),
  native: NativeRequestRef,
  /** The product-level prompt or plan this request carries, if any. */
  promptId: Schema.optionalKey(PromptId),
  planId: Schema.optionalKey(PlanId),
  /** A command approval: the command as the provider will run it, and where. */
  command: Schema.optionalKey(Schema.String),
  cwd: Schema.optionalKey(Schema.String)
})
export type RequestOpenedPayload = typeof RequestOpened.fields.payload.Type

/**
 * A request's `detail` as projections show it: a command approval's `command` and `cwd` with the
 * provider's reason, as one JSON object (the field names every client's approval card reads);
 * otherwise the detail as sent.
 */
export const requestDetailView = (payload: RequestOpenedPayload): string | null =>
  payload.command === undefined && payload.cwd === undefined
    ? (payload.detail ?? null)
    : JSON.stringify({
        ...(payload.command === undefined ? {} : { command: payload.command }),
        ...(payload.cwd === undefined ? {} : { cwd: payload.cwd }),
        ...(payload.detail === undefined ? {} : { reason: payload.detail })
      })

export const RequestResolution = Schema.Literals([
  "responded",
  "cancelled",
  "expired",
  "superseded",
  "provider_exited",
  "server_restarted",
  "server_stopped"
])
export type RequestResolution = typeof RequestResolution.Type

export const RequestResolved = event("request.resolved", {
  requestId: RequestId,
  resolution: RequestResolution,
  /** The chosen option, for approvals. */
  optionId: Schema.optionalKey(OptionId),
  /** Who or what resolved it (provenance.ts); absent on events written before it existed. */
  resolvedBy: Schema.optionalKey(ResolvedBy)
})

export const UserInputRequested = event("user-input.requested", {
  prompt: UserInputPrompt,
  requestId: Schema.optionalKey(RequestId)
})

export const UserInputResolved = event("user-input.resolved", {
  promptId: PromptId,
  resolution: PromptResolutionKind,
  /** Secret questions' entries are `{questionId, redacted: true}` only. */
  answers: Schema.Array(UserInputAnswerEntry),
  reason: Schema.optionalKey(Schema.String),
  /** Who or what resolved it (provenance.ts); never an answer. Absent on events written before it existed. */
  resolvedBy: Schema.optionalKey(ResolvedBy)
})

// ---- diagnostics ---------------------------------------------------------------------------

export const RuntimeWarning = event("runtime.warning", {
  code: Schema.String,
  message: Schema.String,
  detail: Schema.optionalKey(Schema.Json)
})

export const RuntimeError = event("runtime.error", {
  code: Schema.String,
  message: Schema.String,
  fatal: Schema.Boolean,
  detail: Schema.optionalKey(Schema.Json)
})

export const RuntimeEventMembers = [
  SessionStarted,
  SessionConfigured,
  SessionStateChanged,
  SessionExited,
  ModeChanged,
  CapabilitiesChanged,
  TurnStarted,
  TurnCompleted,
  ItemStarted,
  ItemUpdated,
  ItemCompleted,
  ContentDelta,
  TurnPlanUpdated,
  PlanProposedDelta,
  PlanProposedCompleted,
  PlanDecision,
  RequestOpened,
  RequestResolved,
  UserInputRequested,
  UserInputResolved,
  RuntimeWarning,
  RuntimeError
] as const

export const RuntimeEvent = Schema.Union(RuntimeEventMembers)
export type RuntimeEvent = typeof RuntimeEvent.Type
export type RuntimeEventType = RuntimeEvent["type"]
export type RuntimeEventOf<T extends RuntimeEventType> = Extract<RuntimeEvent, { readonly type: T }>

export const RuntimeEventTypes: ReadonlyArray<RuntimeEventType> = RuntimeEventMembers.map(
  (member) => member.fields.type.schema.literal
)
