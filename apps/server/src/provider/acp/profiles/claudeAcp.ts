import { acpCapabilities, type AcpCommand, type AcpProfile } from "../AcpProfile.ts"

/**
 * Claude Code settings for every claude-agent-acp session (`_meta.claudeCode.options.settings`,
 * the CLI's `--settings` layer). claude-agent-acp launches Claude Code with
 * `allowDangerouslySkipPermissions` whenever it is not root (or `IS_SANDBOX` is set), and with
 * that flag Claude Code's permission check allows every tool in `plan` mode without calling
 * `canUseTool`: no `session/request_permission` ever reaches us, so a plan-mode turn ran a
 * writing command unasked. Disabling bypass mode makes plan mode ask as it does for Claude
 * itself (read-only tools run, anything else asks), at the price of `bypassPermissions`.
 * (0.101 still offers `exit-plan-bypass` on ExitPlanMode, and honours it: a person who picks
 * that review option gets bypass mode, read as `execute`.)
 */
const CLAUDE_ACP_SESSION_META = {
  claudeCode: { options: { settings: { permissions: { disableBypassPermissionsMode: "disable" } } } }
} as const

/**
 * Zed's `@zed-industries/claude-agent-acp` (0.23.1): modes `default | acceptEdits | plan |
 * dontAsk | bypassPermissions`; its ExitPlanMode permission carries the plan in its input, and
 * its questions were never shown as question cards.
 */
const zedClaudeAcp = (base: AcpProfile): AcpProfile => ({
  ...base,
  modes: { default: "default", acceptEdits: "default", plan: "plan", bypassPermissions: "execute", dontAsk: "execute" },
  capabilities: acpCapabilities({ supportsPlanMode: true, supportsExitPlanMode: true })
})

/**
 * `@agentclientprotocol/claude-agent-acp` (0.101.x): Claude Code permission modes. `plan` is plan
 * mode; `default`, `acceptEdits` and `auto` (Claude decides what to ask, its default where the
 * model supports it) are ordinary agent work; `bypassPermissions` (and Zed's `dontAsk`) never
 * prompt, canonical `execute`, read but never switched to: bypass is disabled (above, so the CLI
 * refuses it) and `dontAsk` denies whatever is not pre-approved, so this profile offers no
 * `execute`. AskUserQuestion arrives as a form elicitation (`question_N` with its options, an
 * array for multi-select, `question_N_custom` for free text); ExitPlanMode as a `switch_mode`
 * tool call plus a permission whose options (`exit-plan-*`, `reject`) are the review's choices,
 * the plan in the tool call's input. Zed's 0.23 is the `@zed-industries/claude-agent-acp` variant.
 */
export const claudeAcpProfile = (options: AcpCommand = {}): AcpProfile => ({
  provider: "acp-claude",
  label: "claude-agent-acp",
  command: options.command ?? "claude-agent-acp",
  args: options.args ?? [],
  modes: {
    default: "default",
    acceptEdits: "default",
    auto: "default",
    plan: "plan",
    bypassPermissions: "execute",
    dontAsk: "execute"
  },
  preferredModes: { default: "default", plan: "plan" },
  unswitchableModes: ["bypassPermissions", "dontAsk"],
  capabilities: acpCapabilities({
    supportsPlanMode: true,
    supportsExitPlanMode: true,
    supportsStructuredUserInput: true,
    supportsFreeformUserInput: true,
    supportsMultiSelect: true,
    supportsPlanOptions: true
  }),
  checklistAuthority: "plan",
  sessionMeta: CLAUDE_ACP_SESSION_META,
  variants: { "@zed-industries/claude-agent-acp": zedClaudeAcp }
})
