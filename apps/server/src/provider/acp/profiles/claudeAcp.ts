import { acpCapabilities, type AcpProfile } from "../AcpProfile.ts"

/**
 * `@zed-industries/claude-agent-acp` (0.23.1): Claude Code permission modes. `plan` is plan
 * mode; `default` and `acceptEdits` are ordinary agent work; `bypassPermissions` and `dontAsk`
 * never prompt, which is canonical `execute`. ExitPlanMode arrives as a `switch_mode` tool
 * call plus a permission request carrying the plan, so proposed plans are supported.
 */
export const claudeAcpProfile = (
  options: { readonly command?: string; readonly args?: ReadonlyArray<string> } = {}
): AcpProfile => ({
  provider: "acp-claude",
  label: "claude-agent-acp",
  command: options.command ?? "claude-agent-acp",
  args: options.args ?? [],
  modes: { default: "default", acceptEdits: "default", plan: "plan", bypassPermissions: "execute", dontAsk: "execute" },
  preferredModes: { default: "default", plan: "plan", execute: "bypassPermissions" },
  capabilities: acpCapabilities({ supportsPlanMode: true, supportsExitPlanMode: true }),
  extensionRequests: {},
  extensionNotifications: {},
  checklistAuthority: "plan"
})
