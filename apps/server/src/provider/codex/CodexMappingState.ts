import type { OperatingMode, OptionId, ProviderCapabilities, ThreadId, TokenUsage } from "@planbridge/contracts"
import type { ApprovalDecision, ConfigReadLayer, JsonRpcError, JsonRpcId } from "./CodexProtocol.ts"
import type { AppliedPermissions, PermissionsLine } from "./CodexPermissions.ts"
import type { Elicitation } from "../kernel/ElicitationForm.ts"
import type { Mapped as KernelMapped } from "../kernel/Mapped.ts"
import type { Stepped } from "../kernel/SessionRunner.ts"
import type { OpenRequest, OpenRequests } from "../kernel/OpenRequests.ts"

/**
 * The small explicit state the pure Codex mapping threads through: what it must remember
 * between messages to turn them into canonical events (open requests on both sides, the mode,
 * the active turn, usage). Nothing here is needed to *render* a session; that is the
 * projection's job downstream.
 */

export interface ApprovalChoice {
  readonly optionId: OptionId
  /** A command or file-change decision, answered `{decision}`. */
  readonly decision?: ApprovalDecision
  /** The whole response, for requests not answered `{decision}` (permissions approvals, MCP confirmations). */
  readonly result?: unknown
}

/** A server → client request the session has not seen resolved yet (kernel `OpenRequests.ts`). */
export interface OpenServerRequest extends OpenRequest {
  readonly nativeId: JsonRpcId
  readonly method: string
  readonly turnId: string
  readonly itemId: string
  /** An MCP elicitation's form fields, for its answer (CodexElicitation.ts). */
  readonly elicitation?: Elicitation
  readonly choices?: ReadonlyArray<ApprovalChoice>
  /** The chosen approval option, once answered. */
  readonly optionId?: OptionId
}

export interface ClientRequestRecord {
  readonly method: string
  /** The turn running when it was sent: a `turn/start` answered with this id was taken as steering. */
  readonly activeTurnId: string | null
}

export interface CodexMappingState {
  readonly threadId: ThreadId
  readonly nativeThreadId: string | null
  readonly mode: OperatingMode
  readonly model: string | null
  readonly activeTurnId: string | null
  /** Client requests awaiting their response, by JSON-RPC id key. */
  readonly clientRequests: ReadonlyMap<string, ClientRequestRecord>
  readonly serverRequests: OpenRequests<OpenServerRequest>
  readonly turnUsage: ReadonlyMap<string, TokenUsage>
  /** What was already reported once (unhandled methods, foreign thread ids), to warn only once. */
  readonly reported: ReadonlySet<string>
  /** Why the session is ending, when it was our doing (a stdout line over the bound). */
  readonly fatal: string | null
  /**
   * The layers `config/read` reported (user credentials mode only), for `session.configured` and
   * the adapter's permission decision.
   */
  readonly configLayers: ReadonlyArray<ConfigReadLayer> | null
  /** The adapter's permission decision (a `permissions` local line), for `session.configured`. */
  readonly permissions: PermissionsLine | null
  /** What Codex applied on `thread/start` / `thread/resume`; each `turn/start` sends it back per mode. */
  readonly applied: AppliedPermissions | null
}

/**
 * The turn a mode switch would cut into (Codex takes a mode per `turn/start`): from the moment
 * `turn/start` is sent (its response may reach the caller before the mapping has taken it in)
 * until `turn/completed`, so earlier than the projection knows the turn.
 */
export const runningTurn = (state: CodexMappingState): string | undefined =>
  state.activeTurnId ??
  ([...state.clientRequests.values()].some((r) => r.method === "turn/start") ? "(starting)" : undefined)

/** The one refusal for a mode Codex lacks, whichever command asked for it. */
export const noSuchMode = (mode: OperatingMode) => `Codex has no '${mode}' mode (plan and default only)`

export const initialMappingState = (threadId: ThreadId, mode: OperatingMode): CodexMappingState => ({
  threadId,
  nativeThreadId: null,
  mode,
  model: null,
  activeTurnId: null,
  clientRequests: new Map(),
  serverRequests: new Map(),
  turnUsage: new Map(),
  reported: new Set(),
  fatal: null,
  configLayers: null,
  permissions: null,
  applied: null
})

/**
 * What Codex 0.171.0 can do, honestly:
 * - plan mode yes (collaboration mode `plan`), switchable per turn; no separate ask mode;
 * - checklists yes (`turn/plan/updated`), proposed-plan prose streamed (`item/plan/delta`);
 * - structured questions yes (`item/tool/requestUserInput`), free text yes (`isOther`);
 * - multi-select NO: `ToolRequestUserInputQuestion` (generated types) has no multi-select flag,
 *   and the model's `request_user_input` tool asks for "2-3 mutually exclusive choices" with no
 *   way to request more than one; the answer array exists only to carry the free-text note;
 * - no plan hand-off request: a `<proposed_plan>` ends the turn, nothing waits for approval.
 */
export const codexCapabilities: ProviderCapabilities = {
  supportsPlanMode: true,
  supportsAskMode: false,
  supportsStructuredPlanUpdates: true,
  supportsPlanTextStreaming: true,
  supportsStructuredUserInput: true,
  supportsFreeformUserInput: true,
  supportsMultiSelect: false,
  supportsExitPlanMode: false,
  supportsModeSwitching: true,
  supportsResume: true
}

/** A reply the session must send on the provider's wire (e.g. refusing a request it cannot handle). */
export type OutgoingMessage = { readonly id: JsonRpcId; readonly error: JsonRpcError }

/** What a Codex mapping function gives (kernel `Mapped.ts`); its replies are JSON-RPC errors. */
export type Mapped = KernelMapped<CodexMappingState, OutgoingMessage>
/** One line mapped, as the runner and the replay take it. */
export type StepResult = Stepped<CodexMappingState, OutgoingMessage>
