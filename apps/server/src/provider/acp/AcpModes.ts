import type { OperatingMode, ProviderCapabilities, RawNative } from "@planbridge/contracts"
import type { EventDraft } from "../kernel/EventDraft.ts"
import type * as N from "./AcpNative.ts"
import { canonicalMode, type AcpProfile } from "./AcpProfile.ts"

export interface ModeRequest {
  readonly method: "session/set_mode" | "session/set_config_option"
  readonly params: unknown
  readonly nativeMode: string
}

/**
 * A session's modes: what the agent offers (`modes` and/or a `configOptions` entry of category
 * `mode`), the current native mode and its canonical reading through the profile.
 */
export class ModeState {
  mode: OperatingMode = "unknown"
  nativeMode: string | undefined
  private available: ReadonlyArray<string> = []
  private configId: string | undefined
  private hasModes = false

  constructor(private readonly profile: AcpProfile) {}

  read(modes: N.SessionModeState | undefined, configOptions: ReadonlyArray<N.ConfigOption> | undefined): void {
    const modeOption = configOptions?.find((o) => o.category === "mode")
    this.configId = modeOption?.id
    const optionValues = (modeOption?.options ?? []).flatMap((o) =>
      typeof o === "object" && o !== null && typeof (o as { value?: unknown }).value === "string"
        ? [(o as { value: string }).value]
        : []
    )
    this.hasModes = modes !== undefined
    this.available = modes !== undefined ? modes.availableModes.map((m) => m.id) : optionValues
    const current =
      modes?.currentModeId ?? (typeof modeOption?.currentValue === "string" ? modeOption.currentValue : undefined)
    this.nativeMode = current
    this.mode = canonicalMode(this.profile, current)
  }

  /** Profile upper bounds, limited to what this session's modes really offer. */
  capabilities(): ProviderCapabilities {
    const offered = new Set(this.available.map((id) => canonicalMode(this.profile, id)))
    const base = this.profile.capabilities
    return {
      ...base,
      supportsPlanMode: base.supportsPlanMode && offered.has("plan"),
      supportsAskMode: base.supportsAskMode && offered.has("ask"),
      supportsModeSwitching: base.supportsModeSwitching && this.available.length > 1
    }
  }

  /** The request that switches to a canonical mode; undefined when no offered mode maps to it. */
  request(sessionId: string, mode: OperatingMode): ModeRequest | undefined {
    const preferred = this.profile.preferredModes[mode]
    const nativeMode =
      preferred !== undefined && this.available.includes(preferred)
        ? preferred
        : this.available.find((id) => canonicalMode(this.profile, id) === mode)
    if (nativeMode === undefined) return undefined
    // session/set_mode is what Cursor documents and every agent here accepts; the config
    // option is the way only for agents that expose modes solely as a config option.
    if (this.hasModes || this.configId === undefined) {
      return { method: "session/set_mode", params: { sessionId, modeId: nativeMode }, nativeMode }
    }
    return {
      method: "session/set_config_option",
      params: { sessionId, configId: this.configId, value: nativeMode },
      nativeMode
    }
  }

  /** `mode.changed` when the native mode really changed (agents echo switches in two ways). */
  change(nativeMode: string, raw: RawNative): Array<EventDraft> {
    if (nativeMode === this.nativeMode) return []
    this.nativeMode = nativeMode
    this.mode = canonicalMode(this.profile, nativeMode)
    return [{ type: "mode.changed", raw, payload: { mode: this.mode, nativeMode } }]
  }

  fromConfig(options: ReadonlyArray<N.ConfigOption>, raw: RawNative): Array<EventDraft> {
    const modeOption = options.find((o) => o.category === "mode")
    return typeof modeOption?.currentValue === "string" ? this.change(modeOption.currentValue, raw) : []
  }
}
