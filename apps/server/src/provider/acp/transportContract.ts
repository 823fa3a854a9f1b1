import type { Effect } from "effect"
import type { FlowProbe } from "../inbound.ts"
import type { AdapterError } from "../ProviderAdapter.ts"
import type { TranscriptEntry } from "../kernel/transcript.ts"

/** The contract of the ACP transport (transport.ts implements it). */

export interface AcpTransportOptions {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string | undefined>>
  /** Counters of the inbound queue (see `readLinesPaced`), for tests. */
  readonly probe?: FlowProbe
}

/** One of our requests, its id ours, registered before it is written so no response can outrun it. */
export interface PreparedRequest {
  readonly msg: { readonly jsonrpc: "2.0"; readonly id: number; readonly method: string; readonly params: unknown }
  /** The result once the session has mapped the response; a JSON-RPC error or the exit as an AdapterError. */
  readonly response: Effect.Effect<unknown, AdapterError>
}

export interface AcpTransport {
  readonly pid: number
  /**
   * The next line, in stream order: an agent message (`in`), a line that is no message (`local`
   * `{kind:"invalid",…}`), and last the exit (`local` `{kind:"exit",…}`, once stdout is drained).
   * Taking a line frees its place in the bounded queue of lines read ahead of the session.
   */
  readonly take: Effect.Effect<TranscriptEntry>
  /** After the session mapped an `in` line: a response completes the request that asked. */
  readonly mapped: (line: TranscriptEntry) => void
  readonly prepareRequest: (method: string, params: unknown) => PreparedRequest
  /**
   * Writes a message, after every message written before it, without waiting for the pipe: an
   * agent that stops reading its stdin while its own writes wait on our bounded reading must
   * not hold up the session in return. After the exit it fails (`provider_exited`).
   */
  readonly write: (msg: unknown) => Effect.Effect<void, AdapterError>
  /** Set once the agent exited (before its exit line is taken). */
  readonly exited: () => { readonly code: number | null; readonly signal: string | null } | undefined
  readonly stderrTail: () => string
  /** Ends stdin, SIGTERMs the group, SIGKILLs it after a grace period. Idempotent. */
  readonly shutdown: Effect.Effect<void>
}
