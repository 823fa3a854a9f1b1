import type { ProviderCapabilities, ProviderKind } from "@planbridge/contracts"
import { Context, Layer } from "effect"
import type { ProviderAdapter } from "../provider/ProviderAdapter.ts"

export interface RegisteredProvider {
  readonly adapter: ProviderAdapter
  /** What a new session of this provider starts with; sessions publish changes themselves. */
  readonly capabilities: ProviderCapabilities
}

/** The adapters this server can start sessions with, by provider kind. */
export class ProviderRegistry extends Context.Service<
  ProviderRegistry,
  {
    readonly get: (provider: ProviderKind) => RegisteredProvider | undefined
    readonly list: () => ReadonlyArray<{ readonly provider: ProviderKind; readonly capabilities: ProviderCapabilities }>
  }
>()("planbridge/ProviderRegistry") {
  static readonly layer = (providers: ReadonlyArray<RegisteredProvider>) =>
    Layer.succeed(ProviderRegistry, {
      get: (provider) => providers.find((p) => p.adapter.provider === provider),
      list: () => providers.map((p) => ({ provider: p.adapter.provider, capabilities: p.capabilities }))
    })
}
