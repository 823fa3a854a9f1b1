import type {
  OperatingMode,
  OptionId,
  PlanId,
  PromptId,
  ProviderCapabilities,
  ProviderKind,
  RequestId,
  RuntimeEvent,
  ThreadId,
  TurnId
} from "@planbridge/contracts"
import type { Effect, Scope } from "effect"
import type { AdapterError, EmitError } from "./AdapterError.ts"
import type { CheckedAnswer } from "./kernel/CheckedAnswer.ts"

export {
  AdapterError,
  adapterError,
  adapterFailure,
  type AdapterErrorKind,
  EmitError,
  failAdapter
} from "./AdapterError.ts"

/**
 * The contract every provider adapter implements. An adapter speaks one provider's real wire
 * protocol and hands canonical events to `emit`, which persists them (the ingestion service)
 * before anyone is told. `emit` completing is the receipt: an adapter must not answer the
 * provider for something that `emit` has not accepted.
 */
export type EmitRuntimeEvent = (event: RuntimeEvent) => Effect.Effect<void, EmitError>

/**
 * Several events, in order, in one transaction: all are durable when it completes, none if it
 * fails. A session that maps a burst of provider output at once pays one commit for the burst.
 */
export type EmitRuntimeEvents = (events: ReadonlyArray<RuntimeEvent>) => Effect.Effect<void, EmitError>

export interface StartSessionInput {
  readonly threadId: ThreadId
  readonly cwd: string
  readonly mode: OperatingMode
  readonly emit: EmitRuntimeEvent
  /** `emit` for several events at once (all or none); optional: without it, events go one by one. */
  readonly emitAll?: EmitRuntimeEvents
  /**
   * The directory for the provider's own state (Codex `CODEX_HOME`, Claude's `HOME`), kept by the
   * server while the thread may be resumed (`homeFor`). Absent: a scratch one, gone with the session.
   */
  readonly home?: string
  /**
   * Resume this native conversation (the Codex thread id, the Claude or ACP session id) instead of
   * starting a new one; it lives in `home`. An agent that cannot fails with `unsupported`.
   */
  readonly resumeNativeSessionId?: string
}

export interface StartTurnInput {
  readonly text: string
  /** Defaults to the session's current mode. */
  readonly mode?: OperatingMode
}

export interface PlanDecisionInput {
  readonly planId: PlanId
  readonly decision: "approved" | "rejected" | "edited"
  readonly feedback?: string
  readonly editedMarkdown?: string
  /** One of the agent's own review choices, an option of the plan's request (`supportsPlanOptions`). */
  readonly optionId?: OptionId
}

/** A live session. Closing the Scope it was started in kills the provider process (group). */
export interface ProviderSession {
  readonly provider: ProviderKind
  readonly threadId: ThreadId
  readonly capabilities: Effect.Effect<ProviderCapabilities>
  readonly mode: Effect.Effect<OperatingMode>
  readonly startTurn: (input: StartTurnInput) => Effect.Effect<TurnId, AdapterError>
  readonly interrupt: () => Effect.Effect<void, AdapterError>
  readonly setMode: (mode: OperatingMode) => Effect.Effect<void, AdapterError>
  /**
   * Sends an answer, already validated against the stored prompt (`checkAnswer`), to the native
   * request that asked; `prompt_not_pending` when that prompt is not open in this session.
   */
  readonly respondToUserInput: (answer: CheckedAnswer) => Effect.Effect<void, AdapterError>
  /** Resolves a prompt without an answer (`empty`) or cancels it (`cancelled`). */
  readonly dismissUserInput: (
    promptId: PromptId,
    resolution: "empty" | "cancelled"
  ) => Effect.Effect<void, AdapterError>
  readonly respondToRequest: (requestId: RequestId, optionId: OptionId) => Effect.Effect<void, AdapterError>
  readonly decidePlan: (input: PlanDecisionInput) => Effect.Effect<void, AdapterError>
}

export interface ProviderAdapter {
  readonly provider: ProviderKind
  /**
   * Where a thread's sessions keep the provider's own state, given the private directory the
   * server keeps for the thread: the server records it with the thread and resumes on it.
   * Absent: the provider keeps nothing of ours (an ACP agent runs on the server's environment).
   */
  readonly homeFor?: (threadDir: string) => string
  readonly startSession: (input: StartSessionInput) => Effect.Effect<ProviderSession, AdapterError, Scope.Scope>
  /**
   * The provider's own sessions that a new thread could take up (`planbridge threads import`);
   * absent when the provider cannot list them. Fails `unsupported` when the agent does not offer it.
   */
  readonly listSessions?: (cwd: string | undefined) => Effect.Effect<NativeSessionList, AdapterError>
}

/** What `listSessions` found (ACP `session/list`), bounded; `truncated` when there were more. */
export interface NativeSessionList {
  readonly sessions: ReadonlyArray<{
    readonly sessionId: string
    readonly cwd: string
    readonly title?: string
    readonly updatedAt?: string
  }>
  readonly truncated: boolean
  /** How an imported session is taken up: `session/resume` (no replay) or `session/load` (history replayed). */
  readonly takeUpWith: "session/resume" | "session/load"
}
