import type { ProviderAdapter } from "../ProviderAdapter.ts"
import type { AcpProfile } from "./AcpProfile.ts"
import { listAcpSessions } from "./AcpSessionList.ts"
import { makeAcpSession, type AcpSessionOptions } from "./AcpSession.ts"

export type AcpAdapterOptions = AcpSessionOptions

/**
 * A `ProviderAdapter` for any ACP agent; the profile supplies what is agent-specific
 * (`cursorProfile()`, `codexAcpProfile()`, `claudeAcpProfile()`).
 */
export const makeAcpAdapter = (profile: AcpProfile, options: AcpAdapterOptions = {}): ProviderAdapter => ({
  provider: profile.provider,
  startSession: (input) => makeAcpSession(profile, options, input),
  // Sessions are listed only on the environment they run on: a per-thread home (prepareHome)
  // holds one thread's sessions, and the server gives the adapter the thread's directory for it.
  ...(options.prepareHome === undefined
    ? { listSessions: (cwd: string | undefined) => listAcpSessions(profile, options.env ?? process.env, cwd) }
    : { homeFor: (threadDir: string) => threadDir })
})
