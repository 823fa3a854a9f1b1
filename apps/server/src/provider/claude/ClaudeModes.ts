import type { OperatingMode, ProviderCapabilities } from "@planbridge/contracts"

/** Claude's permission modes (the SDK's `PermissionMode`, 0.3.333) we know → canonical mode. */
const CANONICAL = new Map<string, OperatingMode>([
  ["plan", "plan"],
  ["default", "default"],
  ["acceptEdits", "default"],
  ["bypassPermissions", "execute"],
  ["dontAsk", "execute"]
])

/** Claude's permission mode → canonical mode; modes we do not know (`auto`, …) are `unknown`, never guessed. */
export const canonicalMode = (native: string): OperatingMode => CANONICAL.get(native) ?? "unknown"

/** Canonical mode → the permission mode we ask for; Claude has no ask mode. */
export const nativeMode = (mode: OperatingMode): "plan" | "default" | "bypassPermissions" | undefined =>
  mode === "execute" ? "bypassPermissions" : mode === "plan" || mode === "default" ? mode : undefined

export const CLAUDE_CAPABILITIES: ProviderCapabilities = {
  supportsPlanMode: true,
  supportsAskMode: false,
  supportsStructuredPlanUpdates: true,
  // The proposed plan arrives whole in ExitPlanMode; nothing streams it as plan prose.
  supportsPlanTextStreaming: false,
  supportsStructuredUserInput: true,
  supportsFreeformUserInput: true,
  supportsMultiSelect: true,
  supportsExitPlanMode: true,
  // ExitPlanMode's answer carries an edited plan (`updatedInput.plan`) and a denial's message.
  supportsPlanEdits: true,
  supportsPlanFeedback: true,
  supportsModeSwitching: true,
  supportsResume: true
}

export const CLAUDE_MODEL = "claude-sonnet-4-5"
