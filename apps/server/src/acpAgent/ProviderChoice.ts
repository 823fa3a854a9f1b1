import * as acp from "@agentclientprotocol/sdk/unstable"
import type { ProviderInfo } from "@planbridge/contracts"

/**
 * Which provider a new session runs, and what `initialize` says about the providers: the
 * editor learns the agent's capabilities from the server's providers, and, for a provider that
 * is not logged in, an auth method whose description is the provider's own login hint
 * (Planbridge never logs in for the user: `authenticate` answers with that hint).
 */

/** `--provider` when the server offers it; otherwise the first ready provider. */
export const chooseProvider = (providers: ReadonlyArray<ProviderInfo>, wanted: string | undefined): string => {
  if (wanted !== undefined) {
    if (providers.some((p) => p.provider === wanted)) return wanted
    throw new acp.RequestError(
      -32002,
      `the Planbridge server offers no provider '${wanted}' (it offers: ${providers.map((p) => p.provider).join(", ") || "none"})`,
      { planbridge: { code: "unknown_provider" } }
    )
  }
  const ready = providers.find((p) => p.ready !== false)
  if (ready !== undefined) return ready.provider
  throw new acp.RequestError(-32000, "no provider of the Planbridge server is ready: log one in", {
    planbridge: { code: "auth_required" }
  })
}

export const initializeResponse = (
  providers: ReadonlyArray<ProviderInfo>,
  version: string
): acp.InitializeResponse => ({
  protocolVersion: acp.PROTOCOL_VERSION,
  agentCapabilities: {
    loadSession: true,
    promptCapabilities: { image: false, audio: false, embeddedContext: true },
    sessionCapabilities: { list: {}, resume: {} }
  },
  authMethods: providers
    .filter((p) => p.ready === false)
    .map((p) => ({
      id: p.provider,
      name: `Log in to ${p.label ?? p.provider}`,
      description: p.auth?.hint ?? `log ${p.provider} in on the machine the Planbridge server runs on`
    })),
  agentInfo: { name: "planbridge", title: "Planbridge", version }
})
