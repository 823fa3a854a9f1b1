import type { OperatingMode, ProviderCapabilities } from "@planbridge/contracts"

/**
 * The one rule for a mode asked for by `session.start`, `turn.start` or `mode.set`, from the
 * capabilities every provider publishes: `plan` needs `supportsPlanMode`, `ask` needs
 * `supportsAskMode`, and `unknown` (how Planbridge reports a native mode it cannot map) is never
 * something to ask for. `default` and `execute` have no flag; the adapter refuses those it lacks.
 */
export const modeRefusal = (
  provider: string,
  capabilities: ProviderCapabilities,
  mode: OperatingMode
): string | undefined => {
  switch (mode) {
    case "plan":
      return capabilities.supportsPlanMode ? undefined : `${provider} offers no 'plan' mode (supportsPlanMode is false)`
    case "ask":
      return capabilities.supportsAskMode ? undefined : `${provider} offers no 'ask' mode (supportsAskMode is false)`
    case "unknown":
      return "'unknown' reports a native mode Planbridge cannot map; it cannot be asked for"
    default:
      return undefined
  }
}
