import type { OperatingMode } from "@planbridge/contracts"
import type { EventDraft } from "../../../src/provider/kernel/EventDraft.ts"
import type { JsonRpcId } from "../../../src/provider/kernel/jsonRpcId.ts"
import type { TranscriptEntry } from "../../../src/provider/kernel/transcript.ts"
import { step } from "../../../src/provider/acp/AcpMapping.ts"
import type { InvalidLine } from "../../../src/provider/acp/AcpNative.ts"
import type { Reply } from "../../../src/provider/acp/AcpNative.ts"
import type { AcpProfile } from "../../../src/provider/acp/AcpProfile.ts"
import { initialAcpState, type AcpState, type ExitInfo } from "../../../src/provider/acp/AcpState.ts"
import { modeRequests } from "../../../src/provider/acp/AcpModes.ts"

/**
 * The pure ACP mapping driven line by line, as the session and the replay drive it, with the
 * lines a unit test needs spelled as calls: each call is one transcript line (or, for the
 * set-up, our requests and the agent's responses), and the state is threaded through `step`.
 */
export const makeStepper = (profile: AcpProfile, idPrefix = "p") => {
  let state: AcpState = initialAcpState(profile, idPrefix)
  let ours = 0
  let prompt: string | undefined
  const run = (line: TranscriptEntry) => {
    const out = step(state, line)
    state = out.state
    return { drafts: out.drafts, replies: out.replies.map(answerOf) }
  }
  const request = (method: string, params: unknown) => {
    const id = `c${++ours}`
    run({ dir: "out", msg: { jsonrpc: "2.0", id, method, params } })
    return id
  }
  const respond = (id: string, body: object) => run({ dir: "in", msg: { jsonrpc: "2.0", id, ...body } })
  return {
    get state() {
      return state
    },
    get mode(): OperatingMode {
      return state.modes.mode
    },
    pending: () => [...state.pending.values()],
    /** The one request a switch takes (profiles without a plan option), undefined when none. */
    modeRequest: (mode: OperatingMode) => {
      const requests = modeRequests(state, mode)
      return requests?.length === 1 ? requests[0] : undefined
    },
    modeRequests: (mode: OperatingMode) => modeRequests(state, mode),
    /** initialize, then session/new (or session/load), each answered. */
    configure: (
      init: unknown,
      setup: { readonly sessionId?: string; readonly [key: string]: unknown },
      info: { cwd: string; resumed: boolean }
    ): ReadonlyArray<EventDraft> => {
      respond(request("initialize", {}), { result: init })
      const method = info.resumed ? "session/load" : "session/new"
      return respond(request(method, { cwd: info.cwd, sessionId: setup.sessionId }), { result: setup }).drafts
    },
    /** A request of ours (a mode switch), answered with `result`. */
    call: (method: string, params: unknown, result: unknown) => respond(request(method, params), { result }).drafts,
    notification: (method: string, params: unknown) => run({ dir: "in", msg: { jsonrpc: "2.0", method, params } }),
    request: (id: JsonRpcId, method: string, params: unknown) => {
      const { drafts, replies } = run({ dir: "in", msg: { jsonrpc: "2.0", id, method, params } })
      return { drafts, reply: replies[0]?.reply }
    },
    /** Our session/prompt; the turn it started. */
    startTurn: (params: unknown = {}) => {
      prompt = request("session/prompt", params)
      return state.turnId!
    },
    promptFinished: (outcome: { readonly result: unknown } | { readonly error: object }) => respond(prompt!, outcome),
    invalidLine: (line: InvalidLine) => run({ dir: "local", msg: { kind: "invalid", ...line } }).drafts,
    exited: (info: ExitInfo) => run({ dir: "local", msg: { kind: "exit", ...info } }).drafts
  }
}
export type Stepper = ReturnType<typeof makeStepper>

type RpcError = Extract<Reply, { readonly error: unknown }>["error"]

/** A JSON-RPC response we owe the agent, as `{id, reply}`. */
const answerOf = (message: unknown): { readonly id: JsonRpcId; readonly reply: Reply } => {
  const m = message as { readonly id: JsonRpcId; readonly result?: unknown; readonly error?: RpcError }
  return { id: m.id, reply: m.error !== undefined ? { error: m.error } : { result: m.result } }
}
