import type { ProviderAuth, ProviderCapabilities, ProviderInfo, ProviderKind } from "@planbridge/contracts"
import { Context, Effect, Fiber, Layer } from "effect"
import type { ProviderAdapter } from "../provider/ProviderAdapter.ts"

export interface RegisteredProvider {
  readonly adapter: ProviderAdapter
  /** What a new session of this provider starts with; sessions publish changes themselves. */
  readonly capabilities: ProviderCapabilities
  /** A display name for pickers (`Codex`, `Claude`, an ACP agent's name). */
  readonly label?: string
  /** True for demo mode's providers: the real program against Planbridge's own scripted model. */
  readonly demo?: boolean
  /**
   * Whether the provider can start a session with the credentials it finds (a short-lived probe
   * of the real program). Without one, the provider is listed without `ready`/`auth`.
   */
  readonly probeAuth?: Effect.Effect<ProviderAuth>
}

/** What `welcome` shows while a provider's first probe still runs. */
const CHECKING: ProviderAuth = { status: "unknown", hint: "checking whether it is logged in" }

/** A provider that is not logged in can start no session; `unknown` gets the benefit of the doubt. */
const readyOf = (auth: ProviderAuth): boolean => auth.status !== "unauthenticated"

/** The adapters this server can start sessions with, by provider kind, and whether each is ready. */
export class ProviderRegistry extends Context.Service<
  ProviderRegistry,
  {
    readonly get: (provider: ProviderKind) => RegisteredProvider | undefined
    /** Every provider as known now (a provider still being probed is `unknown`), without waiting. */
    readonly list: () => ReadonlyArray<ProviderInfo>
    /** Every provider once its probe has answered (`GET /api/providers`, `planbridge providers`). */
    readonly probed: Effect.Effect<ReadonlyArray<ProviderInfo>>
    /**
     * The provider's auth state for a session about to start: the last probe's answer, asked again
     * when it said `unauthenticated` (the user may have logged in since). Undefined without a probe.
     */
    readonly authForSession: (provider: ProviderKind) => Effect.Effect<ProviderAuth | undefined>
  }
>()("planbridge/ProviderRegistry") {
  static readonly layer = (providers: ReadonlyArray<RegisteredProvider>) =>
    Layer.effect(
      ProviderRegistry,
      Effect.gen(function* () {
        const scope = yield* Effect.scope
        const known = new Map<ProviderKind, ProviderAuth>()
        const running = new Map<ProviderKind, Fiber.Fiber<ProviderAuth>>()
        /** Runs the provider's probe, or joins the one already running; the answer is remembered. */
        const probe = (registered: RegisteredProvider, check: Effect.Effect<ProviderAuth>) =>
          Effect.gen(function* () {
            const kind = registered.adapter.provider
            const inflight = running.get(kind)
            if (inflight !== undefined) return yield* Fiber.join(inflight)
            const fiber = yield* Effect.forkIn(
              check.pipe(
                Effect.tap((auth) => Effect.sync(() => known.set(kind, auth))),
                Effect.ensuring(Effect.sync(() => running.delete(kind)))
              ),
              scope
            )
            running.set(kind, fiber)
            return yield* Fiber.join(fiber)
          })
        const infoOf = (registered: RegisteredProvider, auth: ProviderAuth | undefined): ProviderInfo => ({
          provider: registered.adapter.provider,
          capabilities: registered.capabilities,
          ...(registered.label === undefined ? {} : { label: registered.label }),
          ...(registered.demo === undefined ? {} : { demo: registered.demo }),
          ...(auth === undefined ? {} : { ready: readyOf(auth), auth })
        })
        const settled = (registered: RegisteredProvider): Effect.Effect<ProviderAuth | undefined> => {
          const check = registered.probeAuth
          if (check === undefined) return Effect.succeed(undefined)
          const answer = known.get(registered.adapter.provider)
          return answer !== undefined && !running.has(registered.adapter.provider)
            ? Effect.succeed(answer)
            : probe(registered, check)
        }
        // Every probe starts with the server, concurrently: the first client usually finds them done.
        for (const registered of providers) {
          if (registered.probeAuth !== undefined) yield* Effect.forkIn(probe(registered, registered.probeAuth), scope)
        }
        return {
          get: (provider) => providers.find((p) => p.adapter.provider === provider),
          list: () =>
            providers.map((p) =>
              infoOf(p, p.probeAuth === undefined ? undefined : (known.get(p.adapter.provider) ?? CHECKING))
            ),
          probed: Effect.forEach(providers, (p) => Effect.map(settled(p), (auth) => infoOf(p, auth)), {
            concurrency: "unbounded"
          }),
          authForSession: (provider) =>
            Effect.gen(function* () {
              const registered = providers.find((p) => p.adapter.provider === provider)
              if (registered?.probeAuth === undefined) return undefined
              const auth = yield* settled(registered)
              if (auth === undefined || auth.status !== "unauthenticated") return auth
              return yield* probe(registered, registered.probeAuth)
            })
        }
      })
    )
}
