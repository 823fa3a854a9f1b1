import type { ModePermissions, PermissionSource } from "@planbridge/contracts"
import { Schema } from "effect"
import type { ConfigReadLayer } from "./CodexProtocol.ts"

/**
 * Which approval policy and sandbox a Codex session runs with, per mode, and why. Codex only
 * asks its questions, approvals and MCP elicitations through the client under a policy that lets
 * it ask (`never` makes it decline them itself), and an approved plan can only be implemented
 * outside a read-only sandbox. So:
 *   plan    — read-only sandbox (planning changes nothing), the default mode's approval policy;
 *   default — the user's own `approval_policy` / `sandbox_mode` (user credentials mode, from the
 *             `config/read` layers other than Planbridge's `-c` flags), else the server's option,
 *             else Planbridge's documented default: `on-request` + `workspace-write`.
 * The decision is a transcript `local` line (`permissions`), so a replay reports it too; Codex's
 * answer to `thread/start` says what it actually applied.
 */

/** Planbridge's default when neither the user's configuration nor the server says otherwise. */
export const PLANBRIDGE_DEFAULT_PERMISSIONS = { approvalPolicy: "on-request", sandbox: "workspace-write" } as const

export const CodexApprovalPolicy = Schema.Literals(["untrusted", "on-request", "never"])
export type CodexApprovalPolicy = typeof CodexApprovalPolicy.Type
export const CodexSandboxMode = Schema.Literals(["read-only", "workspace-write", "danger-full-access"])
export type CodexSandboxMode = typeof CodexSandboxMode.Type

/** A decided setting: the native value (a policy may be Codex's `{granular: …}` object), where it came from. */
const Setting = <S extends Schema.Top>(value: S) =>
  Schema.Struct({
    value,
    source: Schema.Literals(["user_config", "server_option", "planbridge_default"]),
    layer: Schema.optionalKey(Schema.String)
  })

/** The transcript's `local` line: the default mode's settings as decided before `thread/start`. */
export const PermissionsLine = Schema.Struct({
  kind: Schema.Literal("permissions"),
  approvalPolicy: Setting(Schema.Json),
  sandbox: Setting(CodexSandboxMode)
})
export type PermissionsLine = typeof PermissionsLine.Type

/** Layers that are not the user's own: Planbridge's `-c` flags and the defaults Codex ships. */
const NOT_THE_USERS = new Set(["sessionFlags", "packagedDefaults"])

const isApprovalPolicy = (value: unknown): value is Schema.Json =>
  Schema.is(CodexApprovalPolicy)(value) ||
  (typeof value === "object" && value !== null && !Array.isArray(value) && "granular" in value)

/** The user's own setting: the first layer of theirs (highest precedence first) that sets it. */
const fromUser = <A>(
  layers: ReadonlyArray<ConfigReadLayer>,
  key: "approval_policy" | "sandbox_mode",
  valid: (v: unknown) => v is A
) => {
  for (const { name, config } of layers) {
    const value = config?.[key]
    if (!NOT_THE_USERS.has(name.type) && valid(value))
      return { value, source: "user_config" as const, layer: name.type }
  }
  return undefined
}

/** The server's option, else Planbridge's default. */
const fromServer = <A>(option: A | undefined, fallback: A) =>
  option !== undefined
    ? { value: option, source: "server_option" as const }
    : { value: fallback, source: "planbridge_default" as const }

/** The default mode's settings: the user's own, else the server's option, else Planbridge's default. */
export const decidePermissions = (
  options: { readonly approvalPolicy?: CodexApprovalPolicy; readonly sandbox?: CodexSandboxMode },
  layers: ReadonlyArray<ConfigReadLayer>
): PermissionsLine => ({
  kind: "permissions",
  approvalPolicy:
    fromUser(layers, "approval_policy", isApprovalPolicy) ??
    fromServer<Schema.Json>(options.approvalPolicy, PLANBRIDGE_DEFAULT_PERMISSIONS.approvalPolicy),
  sandbox:
    fromUser(layers, "sandbox_mode", Schema.is(CodexSandboxMode)) ??
    fromServer<CodexSandboxMode>(options.sandbox, PLANBRIDGE_DEFAULT_PERMISSIONS.sandbox)
})

/** What Codex applied on `thread/start` / `thread/resume` (its `AskForApproval`, `SandboxPolicy`). */
export interface AppliedPermissions {
  readonly approvalPolicy: unknown
  readonly sandbox: unknown
}

/** A policy's name as Codex's documentation spells it (`granular` for the object form). */
export const approvalPolicyName = (value: unknown): string => (typeof value === "string" ? value : "granular")

const SANDBOX_NAMES: ReadonlyMap<unknown, string> = new Map([
  ["readOnly", "read-only"],
  ["workspaceWrite", "workspace-write"],
  ["dangerFullAccess", "danger-full-access"],
  ["externalSandbox", "external-sandbox"]
])

/** A `SandboxPolicy` (what `thread/start` answers) by its mode name. */
export const sandboxName = (policy: unknown): string | undefined =>
  typeof policy === "object" && policy !== null && "type" in policy ? SANDBOX_NAMES.get(policy.type) : undefined

const SOURCE_TEXT: Readonly<Record<Exclude<PermissionSource, "mode">, string>> = {
  user_config: "your Codex configuration",
  server_option: "the server's Codex option",
  planbridge_default: "Planbridge's default"
}

const said = (setting: PermissionsLine["approvalPolicy"] | PermissionsLine["sandbox"]) =>
  setting.layer === undefined ? SOURCE_TEXT[setting.source] : `${SOURCE_TEXT[setting.source]} (${setting.layer} layer)`

/**
 * What the session runs with in each Codex mode, for `session.configured`: the values Codex
 * applied (its `thread/start` answer), sources from the decision.
 */
export const modePermissions = (
  decision: PermissionsLine,
  applied: AppliedPermissions
): ReadonlyArray<ModePermissions> => {
  const approvalPolicy = approvalPolicyName(applied.approvalPolicy)
  const sandbox = sandboxName(applied.sandbox) ?? decision.sandbox.value
  const fromDefault = {
    approvalPolicy,
    approvalPolicySource: decision.approvalPolicy.source,
    sandbox,
    sandboxSource: decision.sandbox.source
  }
  return [
    {
      mode: "default",
      ...fromDefault,
      reason: `Approval policy ${approvalPolicy} from ${said(decision.approvalPolicy)}, sandbox ${sandbox} from ${said(decision.sandbox)}.`
    },
    {
      mode: "plan",
      ...fromDefault,
      sandbox: "read-only",
      sandboxSource: "mode",
      reason: `Plan mode runs read-only so planning changes nothing; approval policy ${approvalPolicy} from ${said(decision.approvalPolicy)}.`
    }
  ]
}

/**
 * The per-turn override `turn/start` carries for a mode (Codex keeps a turn's override for later
 * turns, so every turn names its own): plan read-only, default the sandbox `thread/start` applied.
 */
export const turnPermissions = (
  mode: "plan" | "default",
  applied: AppliedPermissions | null
): Readonly<Record<string, unknown>> =>
  applied === null
    ? {}
    : {
        approvalPolicy: applied.approvalPolicy,
        sandboxPolicy: mode === "plan" ? { type: "readOnly" } : applied.sandbox
      }
