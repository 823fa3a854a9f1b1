import type { FlowProbe } from "../inbound.ts"
import type { JsonRpcId } from "../kernel/jsonRpcId.ts"
import type { AdapterError } from "../ProviderAdapter.ts"
import type { InboundKind } from "./agentLines.ts"
import type { Reply } from "./pending.ts"
import type { Effect } from "effect"
import type { TranscriptEntry } from "../kernel/transcript.ts"

/** The contract of the ACP transport (transport.ts implements it). */

/**
 * Sees every JSON-RPC message in the order the session processes it (recording): agent
 * requests, notifications, invalid lines and replies the session acts on are reported by the
 * session when it takes them up, our answers when they are settled, everything else as it
 * crosses the wire, as lines of the kernel's transcript (`in`, `out`, and a line that is no
 * message as `local` `{kind:"invalid",…InvalidLine}`). A replay then meets the messages in the
 * order the live session handled them.
 */
export type TrafficTap = (entry: TranscriptEntry) => void

export interface ChildExit {
  readonly code: number | null
  readonly signal: string | null
}

export interface AcpTransportOptions {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string | undefined>>
  /** Agent → client requests, notifications and lines that are no JSON-RPC message, in wire order. */
  readonly onInbound: (message: InboundMessage) => void
  readonly onExit: (exit: ChildExit) => void
  readonly tap?: TrafficTap
  /** Counters of the inbound queue (see `readLinesPaced`), for tests. */
  readonly probe?: FlowProbe
}

export type InboundMessage = InboundKind & {
  /**
   * Reports the message to the tap and frees its place in the transport's bounded queue of
   * agent lines (`INBOUND_QUEUE_LINES`): the session calls it when it takes the message up.
   * Until it does, the message counts as read ahead, and a full queue stops reading the agent.
   */
  readonly record: () => void
}

export interface RequestOptions {
  readonly timeoutMs?: number
  /** `record` reports the reply to the tap (and frees its place, as above); call it when the reply is processed. */
  readonly onReply?: (reply: Reply, record: () => void) => void
}

export interface AcpTransport {
  readonly pid: number
  /**
   * Sends a request and waits for its result. `onReply`, when given, sees the agent's reply at
   * its place in the inbound stream (before any later message), which the promise cannot.
   */
  readonly request: (method: string, params: unknown, options?: RequestOptions) => Effect.Effect<unknown, AdapterError>
  /**
   * Queues a notification for writing, after every message queued before it, and does not wait
   * for the write: an agent that stops reading its stdin while its own writes wait on our
   * bounded reading must not hold up the session's queue (and so our reading) in return.
   */
  readonly notify: (method: string, params: unknown) => Effect.Effect<void, AdapterError>
  /** Writes the client's answer to an agent request (the SDK handler waiting on that id). */
  readonly settle: (id: JsonRpcId, reply: Reply) => void
  readonly stderrTail: () => string
  /** True once `shutdown` began: an exit after that is ours, not a crash. */
  readonly closing: () => boolean
  /** Ends stdin, SIGTERMs the group, SIGKILLs it after a grace period. Idempotent. */
  readonly shutdown: Effect.Effect<void>
}
