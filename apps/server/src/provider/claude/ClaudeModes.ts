import type { OperatingMode, ProviderCapabilities } from "@planbridge/contracts"

/** The SDK's `PermissionMode` values (0.3.333). */
export type NativePermissionMode = "default" | "acceptEdits" | "bypassPermissions" | "plan" | "dontAsk" | "auto"

/** Claude's permission mode → canonical mode; modes we do not know are `unknown`, never guessed. */
export const canonicalMode = (native: string): OperatingMode => {
  switch (native) {
    case "plan":
      return "plan"
    case "default":
    case "acceptEdits":
      return "default"
    case "bypassPermissions":
    case "dontAsk":
      return "execute"
    default:
      return "unknown"
  }
}

/** Canonical mode → the permission mode we ask for; Claude has no ask mode. */
export const nativeMode = (mode: OperatingMode): NativePermissionMode | undefined => {
  switch (mode) {
    case "plan":
      return "plan"
    case "default":
      return "default"
    case "execute":
      return "bypassPermissions"
    default:
      return undefined
  }
}

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
