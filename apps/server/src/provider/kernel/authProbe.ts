import type { ProviderAuth } from "@planbridge/contracts"
import { Cause, Effect, type Scope } from "effect"

/**
 * A provider's login probe, the same for every provider: `ask` starts a short-lived provider
 * process in the scope (ended when the probe ends), asks it within its own bound and classifies
 * the answer; whatever fails on the way is `unknown`, the hint `<unanswered>: <first line of why>`.
 */
export const authProbe = <E>(
  unanswered: string,
  ask: Effect.Effect<ProviderAuth, E, Scope.Scope>
): Effect.Effect<ProviderAuth> =>
  ask.pipe(
    Effect.scoped,
    Effect.catchCause((cause) => {
      const error = Cause.squash(cause)
      const message = (error instanceof Error ? error.message : String(error)).split("\n")[0]?.slice(0, 300) ?? ""
      return Effect.succeed<ProviderAuth>({ status: "unknown", hint: `${unanswered}: ${message}` })
    })
  )
