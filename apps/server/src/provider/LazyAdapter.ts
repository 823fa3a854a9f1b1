import type { ProviderAuth, ProviderKind } from "@planbridge/contracts"
import { Effect } from "effect"
import { describeCause } from "../util/describeCause.ts"
import { adapterFailure } from "./AdapterError.ts"
import type { ProviderAdapter } from "./ProviderAdapter.ts"

/**
 * What the server needs of an adapter before any of its sessions starts: its kind, where a
 * thread's provider state is kept (`homeFor`, synchronous), and whether it lists its sessions.
 */
export interface AdapterShape {
  readonly provider: ProviderKind
  readonly homeFor?: (threadDir: string) => string
  readonly listsSessions: boolean
}

/**
 * A provider's adapter whose module (session, transport and mapping code: ~100 KB per provider)
 * is imported by the first session that starts, or the first listing of its sessions, not by
 * `serve` before it answers. `shape` must say what the loaded adapter says (the tests compare
 * them); a module that fails to load fails that session `start_failed`, and the next one tries again.
 */
export const lazyAdapter = (shape: AdapterShape, load: () => Promise<ProviderAdapter>): ProviderAdapter => {
  let loading: Promise<ProviderAdapter> | undefined
  const loaded = Effect.tryPromise({
    try: () =>
      (loading ??= load().catch((error: unknown) => {
        loading = undefined
        throw error
      })),
    catch: adapterFailure("start_failed", `loading the ${shape.provider} adapter`)
  })
  return {
    provider: shape.provider,
    ...(shape.homeFor === undefined ? {} : { homeFor: shape.homeFor }),
    startSession: (input) => Effect.flatMap(loaded, (adapter) => adapter.startSession(input)),
    ...(shape.listsSessions
      ? {
          listSessions: (cwd: string | undefined) =>
            Effect.flatMap(loaded, (adapter) =>
              adapter.listSessions === undefined
                ? Effect.die(new Error(`the ${shape.provider} adapter lists no sessions`))
                : adapter.listSessions(cwd)
            )
        }
      : {})
  }
}

/**
 * A login probe whose module is imported when the probe runs. A module that cannot be loaded
 * leaves the login `unknown`, saying why (a session may still start and tell more).
 */
export const lazyProbe = <M>(
  load: () => Promise<M>,
  probe: (module: M) => Effect.Effect<ProviderAuth>
): Effect.Effect<ProviderAuth> =>
  Effect.tryPromise(load).pipe(
    Effect.matchEffect({
      onFailure: (error) =>
        Effect.succeed<ProviderAuth>({
          status: "unknown",
          hint: `the login check could not be loaded: ${describeCause(error.cause)}`
        }),
      onSuccess: probe
    })
  )
