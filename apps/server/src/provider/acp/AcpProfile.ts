import type { OperatingMode, PromptUrl, ProviderCapabilities, ProviderKind } from "@planbridge/contracts"
import type { Result } from "effect"
import type { AskedQuestion, FieldAnswer } from "../kernel/ElicitationForm.ts"

/**
 * What distinguishes one ACP agent from another. The client, the mapping and the session are
 * generic; a profile names the provider kind, how to start the agent, how its modes map to
 * canonical ones, what it can do, how it authenticates and which extension methods it sends.
 */
export interface AcpProfile {
  readonly provider: ProviderKind
  /** Human name used in error messages ("Cursor", "codex-acp"). */
  readonly label: string
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** Native mode id → canonical mode. Ids not listed map to `unknown`; nothing is guessed. */
  readonly modes: Readonly<Record<string, OperatingMode>>
  /** Which native mode to switch to for a canonical one, when several map to it. */
  readonly preferredModes: Partial<Readonly<Record<OperatingMode, string>>>
  /**
   * Native modes the agent lists that Planbridge never switches to (still read through
   * `modes` when the agent is in one): not offered, not a target of `modeRequest`.
   */
  readonly unswitchableModes?: ReadonlyArray<string>
  /**
   * Upper bounds: plan/ask/mode switching are further limited to what the session's
   * `modes` actually offer; structured plan updates turn on at the first `plan` update.
   */
  readonly capabilities: ProviderCapabilities
  readonly auth?: AcpAuth
  /** Agent → client requests beyond ACP (`cursor/ask_question`, …); absent: none. */
  readonly extensionRequests?: Readonly<Record<string, ExtensionHandler>>
  /** Agent → client notifications beyond ACP that carry meaning (`cursor/update_todos`); absent: none. */
  readonly extensionNotifications?: Readonly<Record<string, TodosHandler>>
  /**
   * Which source publishes the checklist (`turn.plan.updated`) when the agent sends two.
   * `plan`: every ACP `plan` session update is a snapshot. `todos`: the todo list extension
   * (ids, merge by id) is authoritative once the session has seen one; later `plan` updates
   * are mirrors of it and publish nothing. Until then `plan` updates are the checklist.
   */
  readonly checklistAuthority: "plan" | "todos"
  /**
   * `_meta` of `session/new` and `session/load`: agent-specific session settings that the
   * agent has no ACP method for (claude-agent-acp: the Claude Code settings that keep plan
   * mode asking). Absent: no `_meta`.
   */
  readonly sessionMeta?: Readonly<Record<string, unknown>>
  /**
   * A config option that turns plan mode on and off beside the modes (codex-acp 2.6:
   * `collaboration_mode`, `default | plan`): while it is `on` the session is in canonical `plan`,
   * whatever its mode; leaving plan mode sets it back to `off`. Read only when the session lists it.
   */
  readonly planOption?: AcpPlanOption
  /**
   * Other releases of the same agent whose wire differs, by the `agentInfo.name` they announce in
   * `initialize` (Zed's `codex-acp` 0.16 beside `@agentclientprotocol/codex-acp` 2.6): the
   * profile the session runs with is this one refined for the agent that answered, never
   * guessed from the command's name.
   */
  readonly variants?: Readonly<Record<string, (base: AcpProfile) => AcpProfile>>
}

/** Where a built-in profile's agent is: its defaults, or a stand-in's (tests, a user's own install). */
export interface AcpCommand {
  readonly command?: string
  readonly args?: ReadonlyArray<string>
}

export interface AcpPlanOption {
  readonly configId: string
  readonly on: string
  readonly off: string
}

/** The profile for the agent that announced itself as `agentName` (`initialize`'s `agentInfo.name`). */
export const profileForAgent = (profile: AcpProfile, agentName: string | undefined): AcpProfile => {
  const variant = agentName === undefined ? undefined : profile.variants?.[agentName]
  return variant === undefined ? profile : variant(profile)
}

/**
 * A profile's capabilities: what every ACP agent can do (switch modes; resume, an upper bound: a
 * session resumes only if the agent announces `loadSession`), plus what this one can.
 */
export const acpCapabilities = (can: Partial<ProviderCapabilities>): ProviderCapabilities => ({
  supportsPlanMode: false,
  supportsAskMode: false,
  supportsStructuredPlanUpdates: false,
  supportsPlanTextStreaming: false,
  supportsStructuredUserInput: false,
  supportsFreeformUserInput: false,
  supportsMultiSelect: false,
  supportsExitPlanMode: false,
  supportsModeSwitching: true,
  supportsResume: true,
  ...can
})

export interface AcpAuth {
  /** The `authenticate` method id, used when the agent advertises it. */
  readonly methodId: string
  /** At least one must be set in the agent's environment (the agent reads it itself). */
  readonly env: ReadonlyArray<string>
}

export interface QuestionRequest {
  readonly title: string | undefined
  readonly description?: string
  /** As the agent asks them; an elicitation's are its form fields, which say how the wire wants each value. */
  readonly questions: ReadonlyArray<AskedQuestion>
  /** URL mode (elicitation): the page to open instead of questions (`PromptUrl`). */
  readonly url?: PromptUrl
}

export type QuestionOutcome =
  | { readonly outcome: "answered"; readonly answers: ReadonlyArray<FieldAnswer> }
  | { readonly outcome: "skipped"; readonly reason?: string }
  | { readonly outcome: "cancelled" }

export interface PlanRequest {
  readonly toolCallId: string | undefined
  readonly title: string | undefined
  readonly markdown: string
}

export type PlanOutcome =
  | { readonly outcome: "accepted" }
  | { readonly outcome: "rejected"; readonly reason?: string }
  | { readonly outcome: "cancelled" }

export interface TodoPatch {
  readonly id?: string
  readonly content?: string
  readonly status?: string
}

export interface TodosRequest {
  readonly todos: ReadonlyArray<TodoPatch>
  readonly merge: boolean
}

/**
 * A codec between an extension's wire shape and a generic request kind: `decode` reads the
 * agent's params (or fails with why they cannot be used, the schema's error for a wire shape),
 * `encode` writes the client's answer, `decodeResponse` reads an answer back (replay of recorded
 * transcripts).
 */
export interface QuestionHandler {
  readonly kind: "question"
  readonly decode: (params: unknown) => Result.Result<QuestionRequest, Error>
  /** Wire-level checks beyond `validateAnswer` (e.g. a number field); a message when refused. */
  readonly check?: (answers: ReadonlyArray<FieldAnswer>, request: QuestionRequest) => string | undefined
  readonly encode: (outcome: QuestionOutcome, request: QuestionRequest) => unknown
  readonly decodeResponse: (result: unknown, request: QuestionRequest) => QuestionOutcome | undefined
}

export interface PlanHandler {
  readonly kind: "plan"
  readonly decode: (params: unknown) => Result.Result<PlanRequest, Error>
  readonly encode: (outcome: PlanOutcome) => unknown
  readonly decodeResponse: (result: unknown) => PlanOutcome | undefined
}

export interface TodosHandler {
  readonly kind: "todos"
  readonly decode: (params: unknown) => Result.Result<TodosRequest, Error>
  /** The answer when it arrives as a request; gets the merged list in wire shape. */
  readonly ack: (todos: ReadonlyArray<TodoPatch>) => unknown
}

export type ExtensionHandler = QuestionHandler | PlanHandler | TodosHandler

export const canonicalMode = (profile: AcpProfile, nativeId: string | undefined): OperatingMode =>
  nativeId !== undefined && Object.hasOwn(profile.modes, nativeId) ? (profile.modes[nativeId] ?? "unknown") : "unknown"
