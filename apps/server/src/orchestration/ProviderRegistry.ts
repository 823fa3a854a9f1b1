import type { ProviderCapabilities, ProviderInfo, ProviderKind } from "@planbridge/contracts"
import { Context, Layer } from "effect"
import type { ProviderAdapter } from "../provider/ProviderAdapter.ts"

export interface RegisteredProvider {
  readonly adapter: ProviderAdapter
  /** What a new session of this provider starts with; sessions publish changes themselves. */
  readonly capabilities: ProviderCapabilities
  /** A display name for pickers, sent in `welcome`. */
  readonly label?: string
  /** True for demo mode's providers: the real program against Planbridge's own scripted model. */
  readonly demo?: boolean
}

/** What `welcome` says of a registered provider. */
const infoOf = (p: RegisteredProvider): ProviderInfo => ({
  provider: p.adapter.provider,
  capabilities: p.capabilities,
  ...(p.label === undefined ? {} : { label: p.label }),
  ...(p.demo === undefined ? {} : { demo: p.demo })
})

/** The adapters this server can start sessions with, by provider kind. */
export class ProviderRegistry extends Context.Service<
  ProviderRegistry,
  {
    readonly get: (provider: ProviderKind) => RegisteredProvider | undefined
    readonly list: () => ReadonlyArray<ProviderInfo>
  }
>()("planbridge/ProviderRegistry") {
  static readonly layer = (providers: ReadonlyArray<RegisteredProvider>) =>
    Layer.succeed(ProviderRegistry, {
      get: (provider) => providers.find((p) => p.adapter.provider === provider),
      list: () => providers.map(infoOf)
    })
}
