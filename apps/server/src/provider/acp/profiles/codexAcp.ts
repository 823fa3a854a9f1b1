import { acpCapabilities, type AcpProfile } from "../AcpProfile.ts"

/**
 * `@zed-industries/codex-acp` (0.16.0). Its "modes" are approval/sandbox presets, not
 * collaboration modes: `read-only` and `auto` both still ask before risky actions, so both are
 * canonical `default` (`auto` is the one chosen for `default`); `full-access` never asks and
 * is `execute`. There is no plan or ask mode on this wire. Checklists arrive as ACP `plan`
 * updates (from `update_plan`), which switch structured plan updates on.
 */
export const codexAcpProfile = (
  options: { readonly command?: string; readonly args?: ReadonlyArray<string> } = {}
): AcpProfile => ({
  provider: "acp-codex",
  label: "codex-acp",
  command: options.command ?? "codex-acp",
  args: options.args ?? [],
  modes: { "read-only": "default", auto: "default", "full-access": "execute" },
  preferredModes: { default: "auto", execute: "full-access" },
  capabilities: acpCapabilities({}),
  extensionRequests: {},
  extensionNotifications: {},
  checklistAuthority: "plan"
})
