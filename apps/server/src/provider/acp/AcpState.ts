import type { PlanId, ProviderCapabilities, SessionExited, TurnId } from "@planbridge/contracts"
import type { EventDraft } from "../kernel/EventDraft.ts"
import type { Mapped as KernelMapped } from "../kernel/Mapped.ts"
import { noOpenRequests, type OpenRequests } from "../kernel/OpenRequests.ts"
import { initialModes, type Modes } from "./AcpModes.ts"
import type * as N from "./AcpNative.ts"
import type { Pending } from "./AcpRequestOpen.ts"
import type { AcpProfile, TodoPatch } from "./AcpProfile.ts"
import { noItems, type TurnItems } from "./AcpTurnItems.ts"

/**
 * The ACP session's mapping state, immutable: `step` (AcpMapping.ts) takes one and gives the
 * next, so the runner keeps the old one when a line's events cannot be recorded.
 */
export interface AcpState {
  readonly profile: AcpProfile
  /** Prefix of the session's canonical ids, so that a replay derives the same ones. */
  readonly idPrefix: string
  /** Our requests by JSON-RPC id key, until the agent's response to each. */
  readonly outbound: ReadonlyMap<string, { readonly method: string; readonly params: unknown }>
  /** The agent's `initialize` result, once it came (the set-up reply reads it). */
  readonly initialize: unknown
  readonly capabilities: ProviderCapabilities
  readonly nativeSessionId: string | undefined
  readonly modes: Modes
  /** session/new or session/load was answered: updates before it are history. */
  readonly configured: boolean
  readonly historySkipped: number
  readonly turnId: TurnId | undefined
  readonly lastTurnId: TurnId | undefined
  readonly turnSeq: number
  readonly items: TurnItems
  readonly todos: ReadonlyArray<TodoPatch>
  /** A todo list extension has been decoded in this session (see `AcpProfile.checklistAuthority`). */
  readonly todosSeen: boolean
  /** Why the session is ending, when it was the client's doing (a line over the bound). */
  readonly fatal: string | undefined
  /** Agent requests waiting for a person, by JSON-RPC id key (the kernel's open requests). */
  readonly pending: OpenRequests<Pending>
  /**
   * The last proposed plan (a `plan_update` in markdown, an ExitPlanMode permission): its review
   * request takes its id, and the same plan sent again in the turn (claude-agent-acp sends the
   * approved plan as a `plan_update`) proposes nothing new.
   */
  readonly proposed: { readonly planId: PlanId; readonly markdown: string; readonly turnId: TurnId } | undefined
}

export const initialAcpState = (profile: AcpProfile, idPrefix: string): AcpState => ({
  profile,
  idPrefix,
  outbound: new Map(),
  initialize: undefined,
  capabilities: profile.capabilities,
  nativeSessionId: undefined,
  modes: initialModes,
  configured: false,
  historySkipped: 0,
  turnId: undefined,
  lastTurnId: undefined,
  turnSeq: 0,
  items: noItems,
  todos: [],
  todosSeen: false,
  fatal: undefined,
  pending: noOpenRequests(),
  proposed: undefined
})

export type Drafts = ReadonlyArray<EventDraft>
/** What an ACP mapping function gives (kernel `Mapped.ts`): its replies are JSON-RPC messages. */
export type Mapped = KernelMapped<AcpState, unknown>

export type ExitInfo = (typeof SessionExited.Type)["payload"]

type SessionCapabilities = NonNullable<NonNullable<N.InitializeResponse["agentCapabilities"]>["sessionCapabilities"]>
/** The agent announced `sessionCapabilities.resume` (ACP `session/resume`) or `.list` (`session/list`). */
export const offers = (init: N.InitializeResponse | undefined, what: keyof SessionCapabilities): boolean =>
  (init?.agentCapabilities?.sessionCapabilities?.[what] ?? null) !== null

/** How a later session takes this one up: `session/resume` (no history replayed) if offered, else `session/load`. */
export const takeUpWith = (init: N.InitializeResponse | undefined) =>
  offers(init, "resume") ? ("session/resume" as const) : ("session/load" as const)

/** A later session can take this one up: `session/resume`, else `session/load`. */
export const resumable = (init: N.InitializeResponse | undefined): boolean =>
  offers(init, "resume") || init?.agentCapabilities?.loadSession === true
