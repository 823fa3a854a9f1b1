import { acpCapabilities, type AcpCommand, type AcpProfile } from "../AcpProfile.ts"

/**
 * Zed's `codex-acp` 0.16.0 (it announces `agentInfo.name` `codex-acp`): its modes are approval
 * presets, `read-only` and `auto` both still ask before risky actions (canonical `default`,
 * `auto` chosen for it), `full-access` never asks (`execute`); no plan or ask mode on its wire.
 */
const zedCodexAcp = (base: AcpProfile): AcpProfile => {
  const { planOption: _planOption, ...rest } = base
  return {
    ...rest,
    modes: { "read-only": "default", auto: "default", "full-access": "execute" },
    preferredModes: { default: "auto", execute: "full-access" },
    capabilities: acpCapabilities({})
  }
}

/**
 * `@agentclientprotocol/codex-acp` (2.6.x, announced as `@agentclientprotocol/codex-acp`). Its
 * modes are approval/sandbox presets: `read-only`, `workspace-write` and `agent` (its default,
 * "auto review") ask before what they do not allow, canonical `default` (`agent` chosen for it);
 * `agent-full-access` never asks (`execute`). Plan mode is the config option `collaboration_mode`
 * (`default | plan`), beside the preset. With the client's `elicitation.form` and `plan`
 * capabilities its questions arrive as form elicitations (one string field per question, with
 * options and a free-text note), the proposed plan as a `plan_update` (markdown), and its review as
 * a `switch_mode` permission with `implement_plan` / `revise_plan`; checklists as ACP `plan`
 * updates. Zed's 0.16 is the `codex-acp` variant.
 */
export const codexAcpProfile = (options: AcpCommand = {}): AcpProfile => ({
  provider: "acp-codex",
  label: "codex-acp",
  command: options.command ?? "codex-acp",
  args: options.args ?? [],
  modes: { "read-only": "default", "workspace-write": "default", agent: "default", "agent-full-access": "execute" },
  preferredModes: { default: "agent", execute: "agent-full-access" },
  planOption: { configId: "collaboration_mode", on: "plan", off: "default" },
  capabilities: acpCapabilities({
    supportsPlanMode: true,
    supportsExitPlanMode: true,
    supportsStructuredUserInput: true,
    supportsFreeformUserInput: true,
    supportsPlanOptions: true
  }),
  checklistAuthority: "plan",
  variants: { "codex-acp": zedCodexAcp }
})
