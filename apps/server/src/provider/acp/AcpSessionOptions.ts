import type { FlowProbe } from "../inbound.ts"
import type { StartSessionInput } from "../ProviderAdapter.ts"
import type { AcpProfile } from "./AcpProfile.ts"
import type { TranscriptEntry } from "../kernel/transcript.ts"

/** `resumeNativeSessionId` resumes with `session/load` when the agent announces `loadSession`. */
export type AcpSessionInput = StartSessionInput

export interface AcpSessionOptions {
  readonly profile: AcpProfile
  /** The agent's whole environment (it is not merged with this process's). */
  readonly env: Readonly<Record<string, string | undefined>>
  /**
   * Sees every line the session maps, in the order it maps them (a replay meets them in that
   * order): agent messages (`in`), ours (`out`, our answers as they are written) and `local`
   * invalid lines; not the exit, which a recorder takes from `session.exited`.
   */
  readonly tap?: (entry: TranscriptEntry) => void
  /** For initialize / authenticate / session set-up / mode switches. Default 60 s. */
  readonly requestTimeoutMs?: number
  /**
   * Prefix of every derived id (turns, requests, prompts, plans, events). Defaults to the
   * thread id plus a random part; recording sets it so a replay reproduces the same ids.
   */
  readonly idPrefix?: string
  /** Counters of the transport's bounded inbound queue, for tests. */
  readonly probe?: FlowProbe
}
