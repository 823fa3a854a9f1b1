import type { RawNative, ThreadId, TurnId } from "@planbridge/contracts"
import type { TaskEntry } from "./ClaudeChecklist.ts"
import { requestEnded, type ClaudeRequest, type Outcome } from "./ClaudeRequests.ts"
import type { EventDraft } from "../kernel/EventDraft.ts"
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
  readonly layersReported: boolean
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
  layersReported: false,
  unansweredAnnotations: false
})

/**
 * The receipt a waiting `canUseTool` callback gets, the Claude mapping's only reply: how its
 * request ended (`undefined`: no request could be opened for it). The session hands the CLI our
 * decision's native form, or the denial matching the outcome.
 */
export interface ClaudeReceipt {
  readonly toolUseID: string
  readonly outcome: Outcome | undefined
}

export interface ClaudeStepped {
  readonly state: ClaudeMappingState
  readonly drafts: ReadonlyArray<EventDraft>
  readonly replies: ReadonlyArray<ClaudeReceipt>
}

/** Working copy for one step: handlers replace `state` and append drafts and receipts. */
export interface Working {
  state: ClaudeMappingState
  readonly drafts: Array<EventDraft>
  readonly replies: Array<ClaudeReceipt>
}

export const update = (w: Working, patch: Partial<ClaudeMappingState>): void => {
  w.state = { ...w.state, ...patch }
}

export const sessionState = (
  state: "running" | "waiting" | "idle",
  flags: ReadonlyArray<string>,
  raw: RawNative
): EventDraft => ({ type: "session.state.changed", raw, payload: { state, flags: [...flags] } })

export const warning = (w: Working, code: string, message: string, raw: RawNative): void => {
  w.drafts.push({ type: "runtime.warning", raw, payload: { code, message } })
}

/** The turn output belongs to; output with no turn of ours (should not happen) gets one rather than dropped. */
export const turnOf = (w: Working): TurnId => {
  if (w.state.turn !== undefined) return w.state.turn.turnId
  const turnId = `${w.state.threadId}/implicit-turn/${w.state.implicitTurns}` as TurnId
  update(w, { turn: { turnId, interrupted: false }, implicitTurns: w.state.implicitTurns + 1 })
  return turnId
}

/** Hands a waiting callback its receipt, once. */
export const receipt = (w: Working, toolUseID: string, outcome: Outcome | undefined): void => {
  if (!w.state.callbacks.has(toolUseID)) return
  update(w, { callbacks: withoutMember(w.state.callbacks, toolUseID) })
  w.replies.push({ toolUseID, outcome })
}

/** Closes an open request with `outcome`: its events, its callback's receipt, and the session running again. */
export const resolve = (w: Working, toolUseID: string, outcome: Outcome, raw: RawNative): void => {
  const request = w.state.requests.get(toolUseID)
  if (request === undefined) return
  const requests = withClosed(w.state.requests, toolUseID)
  update(w, { requests, closed: withEntry(w.state.closed, toolUseID, outcome) })
  w.drafts.push(...requestEnded(request, outcome, raw))
  receipt(w, toolUseID, outcome)
  if (requests.size === 0 && w.state.turn !== undefined && outcome.kind !== "exited")
    w.drafts.push(sessionState("running", [], raw))
}
