import type * as acp from "@agentclientprotocol/sdk/unstable"
import { OperatingMode, type ProviderCapabilities } from "@planbridge/contracts"
import { Schema } from "effect"

/** The id of the one config option this agent offers: the operating mode. */
export const MODE_CONFIG_ID = "mode"

const names: Readonly<Record<OperatingMode, { readonly name: string; readonly description: string }>> = {
  default: { name: "Default", description: "the agent works on the task" },
  plan: { name: "Plan", description: "the agent plans and asks before it changes anything" },
  ask: { name: "Ask", description: "the agent answers questions and changes nothing" },
  execute: { name: "Execute", description: "the agent runs without asking" },
  unknown: { name: "Other", description: "a mode of the provider Planbridge does not map" }
}

/**
 * The modes a session can switch to, by Planbridge's mode rule (PROTOCOL.md, `mode.set`): always
 * `default`; `plan` and `ask` when the capabilities say so (none known yet: only `default`). The mode in effect is listed even
 * when it is none of those (e.g. `unknown`), so that the editor can show it.
 */
export const availableModes = (
  capabilities: ProviderCapabilities | null,
  current: OperatingMode
): ReadonlyArray<OperatingMode> => {
  const modes: Array<OperatingMode> = ["default"]
  if (capabilities?.supportsPlanMode === true) modes.push("plan")
  if (capabilities?.supportsAskMode === true) modes.push("ask")
  if (!modes.includes(current)) modes.push(current)
  return modes
}

/** ACP's `modes` of a session (`session/new`, `load`, `resume`). */
export const modeState = (capabilities: ProviderCapabilities | null, current: OperatingMode): acp.SessionModeState => ({
  currentModeId: current,
  availableModes: availableModes(capabilities, current).map((id) => ({ id, ...names[id] }))
})

/** The same as a config option of category `mode` (clients that prefer config options to modes). */
export const configOptions = (
  capabilities: ProviderCapabilities | null,
  current: OperatingMode
): Array<acp.SessionConfigOption> => [
  {
    id: MODE_CONFIG_ID,
    name: "Mode",
    category: "mode",
    type: "select",
    currentValue: current,
    options: availableModes(capabilities, current).map((value) => ({ value, name: names[value].name }))
  }
]

const decodeMode = Schema.decodeUnknownOption(OperatingMode)

/** A mode id from the editor as an operating mode, or undefined when it names none. */
export const operatingModeOf = (id: unknown): OperatingMode | undefined => {
  const mode = decodeMode(id)
  return mode._tag === "Some" ? mode.value : undefined
}
