import type { FlowProbe } from "../inbound.ts"
import type { StartSessionInput } from "../ProviderAdapter.ts"
import type { TranscriptEntry } from "../kernel/transcript.ts"

/** `resumeNativeSessionId` resumes with `session/load` when the agent announces `loadSession`. */
export type AcpSessionInput = StartSessionInput

/** How an ACP adapter runs its sessions (the profile says which agent). */
export interface AcpSessionOptions {
  /** The agent's whole environment (not merged with this process's, the default); credentials are read from it. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /**
   * For an agent that keeps its sessions under its `HOME` (claude-agent-acp, codex-acp): the
   * agent's whole environment on `home`, the thread's directory the server keeps while the
   * thread may be resumed, after writing there what the agent needs (its config). With it the
   * adapter asks the server for that directory (`homeFor`) and `env` is not used, so a resume
   * after a restart finds the session the agent saved.
   */
  readonly prepareHome?: (home: string) => Readonly<Record<string, string | undefined>>
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
  readonly idPrefix?: (input: AcpSessionInput) => string
  /** Counters of every session's bounded inbound queue (`readLinesPaced`), for tests. */
  readonly probe?: FlowProbe
}
