import type { RawNative, ThreadId, TurnId } from "@planbridge/contracts"
import type { TaskEntry } from "./ClaudeChecklist.ts"
import { requestEnded, type ClaudeRequest, type Outcome } from "./ClaudeRequests.ts"
import { mapped, sessionStateDraft, type Mapped as KernelMapped } from "../kernel/Mapped.ts"
import { withEntry, withoutMember } from "../kernel/immutable.ts"
import { noOpenRequests, withClosed, type OpenRequests } from "../kernel/OpenRequests.ts"

/**
 * What the pure Claude mapping remembers between lines, immutable: the mode, the turn, the
 * native requests open (the kernel's `OpenRequests`) and how each closed one ended, the
 * callbacks waiting for a receipt, the tool uses and checklist seen, the stream's block ids.
 */

/** Where the assistant stream is: `message_start`'s id, the block each message last opened, blocks finished. */
export interface StreamState {
  readonly messageId: string | undefined
  readonly blockIndex: ReadonlyMap<string, number>
  readonly blocksSeen: ReadonlyMap<string, number>
}

export interface ClaudeMappingState {
  readonly threadId: ThreadId
  readonly mode: string
  readonly turn: { readonly turnId: TurnId; readonly interrupted: boolean } | undefined
  readonly implicitTurns: number
  readonly requests: OpenRequests<ClaudeRequest>
  /** How each closed request ended: a callback that asks later is handed exactly this. */
  readonly closed: ReadonlyMap<string, Outcome>
  /** Tool uses whose `canUseTool` callback waits for its receipt. */
  readonly callbacks: ReadonlySet<string>
  readonly denied: ReadonlySet<string>
  readonly toolUses: ReadonlyMap<string, { readonly name: string; readonly input: unknown }>
  readonly unpairedCalls: ReadonlyArray<{ readonly toolName: string; readonly toolUseID: string }>
  readonly stream: StreamState
  readonly tasks: ReadonlyArray<TaskEntry>
  /** The setting sources of a user-mode session, until its first `system/init` reported its MCP servers. */
  readonly settingSources: ReadonlyArray<string> | undefined
  /** The latest `system/init` advertised `ask_user_question_unanswered_v1` (ClaudePrompts.ts). */
  readonly unansweredAnnotations: boolean
}

export const initialClaudeState = (threadId: ThreadId): ClaudeMappingState => ({
  threadId,
  mode: "default",
  turn: undefined,
  implicitTurns: 0,
  requests: noOpenRequests(),
  closed: new Map(),
  callbacks: new Set(),
  denied: new Set(),
  toolUses: new Map(),
  unpairedCalls: [],
  stream: { messageId: undefined, blockIndex: new Map(), blocksSeen: new Map() },
  tasks: [],
  settingSources: undefined,
  unansweredAnnotations: false
})

/**
 * The receipt a waiting `canUseTool` callback gets, the Claude mapping's only reply: how its
 * request ended (`undefined`: no request could be opened for it). When our decision line closed
 * it, `outcome` is that line's own `decision` object, by which the session finds the decision's
 * native form (ClaudeSessionCore.ts); else the CLI gets the denial matching the outcome.
 */
export interface ClaudeReceipt {
  readonly toolUseID: string
  readonly outcome: Outcome | undefined
}

/** What a Claude mapping function gives (kernel `Mapped.ts`): the receipts owed to waiting callbacks. */
export type Mapped = KernelMapped<ClaudeMappingState, ClaudeReceipt>

/** The turn output belongs to; output with no turn of ours (should not happen) gets one rather than dropped. */
export const turnOf = (s: ClaudeMappingState): { readonly state: ClaudeMappingState; readonly turnId: TurnId } => {
  if (s.turn !== undefined) return { state: s, turnId: s.turn.turnId }
  const turnId = `${s.threadId}/implicit-turn/${s.implicitTurns}` as TurnId
  return { state: { ...s, turn: { turnId, interrupted: false }, implicitTurns: s.implicitTurns + 1 }, turnId }
}

/** Hands a waiting callback its receipt, once. */
export const receipt = (s: ClaudeMappingState, toolUseID: string, outcome: Outcome | undefined): Mapped =>
  s.callbacks.has(toolUseID)
    ? {
        state: { ...s, callbacks: withoutMember(s.callbacks, toolUseID) },
        drafts: [],
        replies: [{ toolUseID, outcome }]
      }
    : mapped(s)

/** Closes an open request with `outcome`: its events, its callback's receipt, and the session running again. */
export const resolve = (s: ClaudeMappingState, toolUseID: string, outcome: Outcome, raw: RawNative): Mapped => {
  const request = s.requests.get(toolUseID)
  if (request === undefined) return mapped(s)
  const requests = withClosed(s.requests, toolUseID)
  const handed = receipt({ ...s, requests, closed: withEntry(s.closed, toolUseID, outcome) }, toolUseID, outcome)
  // An answered request (an opened URL page) stopped holding the session up when it was answered.
  const heldUp = !request.answered && s.turn !== undefined && outcome.kind !== "exited"
  const running = heldUp && [...requests.values()].every((r) => r.answered)
  const drafts = [...requestEnded(request, outcome, raw), ...(running ? [sessionStateDraft("running", [], raw)] : [])]
  return { ...handed, drafts }
}
