import type { OperatingMode, ProviderCapabilities, RawNative } from "@planbridge/contracts"
import { mapped } from "../kernel/Mapped.ts"
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
 * `mode`), the current native mode, the profile's plan option when the session lists it
 * (`planValue`, its current value), and the canonical reading of both: `plan` while the plan
 * option is on, else the native mode's through the profile. `nativeMode` is what the session
 * reports (the plan option's value while it is on).
 */
export interface Modes {
  readonly mode: OperatingMode
  readonly nativeMode: string | undefined
  /** The agent's own mode (its preset), whatever the plan option says. */
  readonly preset: string | undefined
  readonly planValue: string | undefined
  readonly available: ReadonlyArray<string>
  readonly configId: string | undefined
  readonly hasModes: boolean
}

export const initialModes: Modes = {
  mode: "unknown",
  nativeMode: undefined,
  preset: undefined,
  planValue: undefined,
  available: [],
  configId: undefined,
  hasModes: false
}

const stringValue = (option: N.ConfigOption | undefined): string | undefined =>
  typeof option?.currentValue === "string" ? option.currentValue : undefined

/** The canonical mode and the reported native one, from the preset and the plan option. */
const reading = (profile: AcpProfile, preset: string | undefined, planValue: string | undefined) => {
  const planOn = profile.planOption !== undefined && planValue === profile.planOption.on
  return {
    mode: planOn ? ("plan" as const) : canonicalMode(profile, preset),
    nativeMode: planOn ? planValue : preset,
    preset,
    planValue
  }
}

/** What a `configOptions` list says: the mode option's value and the plan option's, each if listed. */
export const configValues = (profile: AcpProfile, options: ReadonlyArray<N.ConfigOption>) => ({
  preset: stringValue(options.find((o) => o.category === "mode")),
  planValue:
    profile.planOption === undefined
      ? undefined
      : stringValue(options.find((o) => o.id === profile.planOption?.configId))
})

export const readModes = (
  profile: AcpProfile,
  modes: N.SessionModeState | undefined,
  configOptions: ReadonlyArray<N.ConfigOption> | undefined
): Modes => {
  const modeOption = configOptions?.find((o) => o.category === "mode")
  const optionValues = (modeOption?.options ?? []).flatMap((o) =>
    typeof o === "object" && o !== null && "value" in o && typeof o.value === "string" ? [o.value] : []
  )
  const values = configValues(profile, configOptions ?? [])
  return {
    ...reading(profile, modes?.currentModeId ?? values.preset, values.planValue),
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
    supportsPlanMode: base.supportsPlanMode && (offered.has("plan") || modes.planValue !== undefined),
    supportsAskMode: base.supportsAskMode && offered.has("ask"),
    supportsModeSwitching: base.supportsModeSwitching && (targets.length > 1 || modes.planValue !== undefined)
  }
}

/** The request that sets the agent's own mode (its preset) to `nativeMode`. */
const presetRequest = (modes: Modes, sessionId: string, nativeMode: string): ModeRequest => {
  // session/set_mode is what Cursor documents and every agent here accepts; the config
  // option is the way only for agents that expose modes solely as a config option.
  if (modes.hasModes || modes.configId === undefined)
    return { method: "session/set_mode", params: { sessionId, modeId: nativeMode }, nativeMode }
  const params = { sessionId, configId: modes.configId, value: nativeMode }
  return { method: "session/set_config_option", params, nativeMode }
}

/**
 * The requests that switch to a canonical mode, in order; undefined when the session offers none
 * for it. With the profile's plan option listed: `plan` turns it on (the preset stays), any other
 * mode turns it off first, then switches the preset if its reading is not that mode.
 */
export const modeRequests = (s: AcpState, mode: OperatingMode): ReadonlyArray<ModeRequest> | undefined => {
  const { profile, modes, nativeSessionId: sessionId } = s
  if (sessionId === undefined) return undefined
  const option = modes.planValue === undefined ? undefined : profile.planOption
  const planSwitch = (value: string): ModeRequest => ({
    method: "session/set_config_option",
    params: { sessionId, configId: option?.configId, value },
    nativeMode: value
  })
  if (option !== undefined && mode === "plan") return modes.planValue === option.on ? [] : [planSwitch(option.on)]
  const leavePlan = option !== undefined && modes.planValue === option.on ? [planSwitch(option.off)] : []
  if (option !== undefined && canonicalMode(profile, modes.preset) === mode) return leavePlan
  const targets = switchable(profile, modes)
  const preferred = profile.preferredModes[mode]
  const nativeMode =
    preferred !== undefined && targets.includes(preferred)
      ? preferred
      : targets.find((id) => canonicalMode(profile, id) === mode)
  if (nativeMode === undefined) return undefined
  return [...leavePlan, presetRequest(modes, sessionId, nativeMode)]
}

/**
 * The agent's own mode and/or the plan option now have these values (an update, an echo, an
 * accepted switch; `undefined`: unchanged): `mode.changed` if what the session reports changed.
 */
export const modeChanged = (
  s: AcpState,
  values: { readonly preset?: string | undefined; readonly planValue?: string | undefined },
  raw: RawNative
): Mapped => {
  const next = reading(s.profile, values.preset ?? s.modes.preset, values.planValue ?? s.modes.planValue)
  if (next.nativeMode === undefined) return mapped(s)
  const state = { ...s, modes: { ...s.modes, ...next } }
  if (next.nativeMode === s.modes.nativeMode && next.mode === s.modes.mode) return mapped(state)
  return mapped(state, { type: "mode.changed", raw, payload: { mode: next.mode, nativeMode: next.nativeMode } })
}
