import type { FlowProbe } from "../inbound.ts"
import type { ProviderAdapter } from "../ProviderAdapter.ts"
import type { AcpProfile } from "./AcpProfile.ts"
import { makeAcpSession, type AcpSessionInput, type AcpSessionOptions } from "./AcpSession.ts"
import { definedFields } from "../../util/definedFields.ts"

export interface AcpAdapterOptions {
  /** The agent's environment; defaults to this process's. Credentials are read from it. */
  readonly env?: Readonly<Record<string, string | undefined>>
  readonly tap?: AcpSessionOptions["tap"]
  readonly requestTimeoutMs?: number
  /** See `AcpSessionOptions.idPrefix`; for recording fixtures. */
  readonly idPrefix?: (input: AcpSessionInput) => string
  /** Counters of every session's bounded inbound queue (`readLinesPaced`), for tests. */
  readonly probe?: FlowProbe
}

/**
 * A `ProviderAdapter` for any ACP agent; the profile supplies what is agent-specific
 * (`cursorProfile()`, `codexAcpProfile()`, `claudeAcpProfile()`).
 */
export const makeAcpAdapter = (
  profile: AcpProfile,
  options: AcpAdapterOptions = {}
): ProviderAdapter & {
  readonly startSession: (input: AcpSessionInput) => ReturnType<ProviderAdapter["startSession"]>
} => ({
  provider: profile.provider,
  startSession: (input: AcpSessionInput) =>
    makeAcpSession(
      {
        profile,
        env: options.env ?? process.env,
        ...definedFields({ tap: options.tap }),
        ...definedFields({ requestTimeoutMs: options.requestTimeoutMs }),
        ...(options.idPrefix === undefined ? {} : { idPrefix: options.idPrefix(input) }),
        ...definedFields({ probe: options.probe })
      },
      input
    )
})
