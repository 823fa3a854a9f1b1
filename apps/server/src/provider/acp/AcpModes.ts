import type { OperatingMode, ProviderCapabilities, RawNative } from "@planbridge/contracts"
import type * as N from "./AcpNative.ts"
import { canonicalMode, type AcpProfile } from "./AcpProfile.ts"
import type { AcpState, Mapped } from "./AcpState.ts"

export interface ModeRequest {
  readonly method: "session/set_mode" | "session/set_config_option"
  readonly params: unknown
  readonly nativeMode: string
}

/**
 * A session's modes: what the agent offers (`modes` and/or a `configOptions` entry of category
 * `mode`), the current native mode and its canonical reading through the profile.
 */
export interface Modes {
  readonly mode: OperatingMode
  readonly nativeMode: string | undefined
  readonly available: ReadonlyArray<string>
  readonly configId: string | undefined
  readonly hasModes: boolean
}

export const initialModes: Modes = {
  mode: "unknown",
  nativeMode: undefined,
  available: [],
  configId: undefined,
  hasModes: false
}

export const readModes = (
  profile: AcpProfile,
  modes: N.SessionModeState | undefined,
  configOptions: ReadonlyArray<N.ConfigOption> | undefined
): Modes => {
  const modeOption = configOptions?.find((o) => o.category === "mode")
  const optionValues = (modeOption?.options ?? []).flatMap((o) =>
    typeof o === "object" && o !== null && typeof (o as { value?: unknown }).value === "string"
      ? [(o as { value: string }).value]
      : []
  )
  const nativeMode =
    modes?.currentModeId ?? (typeof modeOption?.currentValue === "string" ? modeOption.currentValue : undefined)
  return {
    mode: canonicalMode(profile, nativeMode),
    nativeMode,
    available: modes !== undefined ? modes.availableModes.map((m) => m.id) : optionValues,
    configId: modeOption?.id,
    hasModes: modes !== undefined
  }
}

/** The session's modes Planbridge may switch to: those the agent offers, less the profile's unswitchable ones. */
const switchable = (profile: AcpProfile, modes: Modes): ReadonlyArray<string> =>
  modes.available.filter((id) => !(profile.unswitchableModes ?? []).includes(id))

/** Profile upper bounds, limited to what this session's modes really offer. */
export const modeCapabilities = (profile: AcpProfile, modes: Modes): ProviderCapabilities => {
  const targets = switchable(profile, modes)
  const offered = new Set(targets.map((id) => canonicalMode(profile, id)))
  const base = profile.capabilities
  return {
    ...base,
    supportsPlanMode: base.supportsPlanMode && offered.has("plan"),
    supportsAskMode: base.supportsAskMode && offered.has("ask"),
    supportsModeSwitching: base.supportsModeSwitching && targets.length > 1
  }
}

/** The request that switches to a canonical mode; undefined when the session offers none for it. */
export const modeRequest = (s: AcpState, mode: OperatingMode): ModeRequest | undefined => {
  const { profile, modes, nativeSessionId: sessionId } = s
  const targets = switchable(profile, modes)
  const preferred = profile.preferredModes[mode]
  const nativeMode =
    preferred !== undefined && targets.includes(preferred)
      ? preferred
      : targets.find((id) => canonicalMode(profile, id) === mode)
  if (nativeMode === undefined || sessionId === undefined) return undefined
  // session/set_mode is what Cursor documents and every agent here accepts; the config
  // option is the way only for agents that expose modes solely as a config option.
  if (modes.hasModes || modes.configId === undefined)
    return { method: "session/set_mode", params: { sessionId, modeId: nativeMode }, nativeMode }
  const params = { sessionId, configId: modes.configId, value: nativeMode }
  return { method: "session/set_config_option", params, nativeMode }
}

/** The native mode is now `nativeMode` (an update, an echo, an accepted switch): `mode.changed` if it really changed. */
export const modeChanged = (s: AcpState, nativeMode: string | undefined, raw: RawNative): Mapped => {
  if (nativeMode === undefined || nativeMode === s.modes.nativeMode) return { state: s, drafts: [] }
  const mode = canonicalMode(s.profile, nativeMode)
  const drafts = [{ type: "mode.changed" as const, raw, payload: { mode, nativeMode } }]
  return { state: { ...s, modes: { ...s.modes, nativeMode, mode } }, drafts }
}

/** The mode a `configOptions` list names, if any (`config_option_update`, a set-option reply). */
export const configMode = (options: ReadonlyArray<N.ConfigOption>): string | undefined => {
  const value = options.find((o) => o.category === "mode")?.currentValue
  return typeof value === "string" ? value : undefined
}
