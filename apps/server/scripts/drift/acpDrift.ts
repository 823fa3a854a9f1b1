import { join } from "node:path"
import { readPackageJson, readSchemaDoc, type ProviderReport, type Surface } from "./report.ts"
import { diffSurface, isObject, type SchemaDoc } from "./schemaDiff.ts"

/**
 * ACP: the SDK's own JSON Schema of protocol version 1 (the version Planbridge speaks,
 * `AcpHandshake.ts`), compared for the methods `provider/acp/` sends, answers or reads; and the
 * wrapper agents (Zed's and their `@agentclientprotocol` successors), whose wire is that protocol:
 * their versions and the SDK range they speak it through.
 */

const SCHEMA = join("@agentclientprotocol", "sdk", "schema", "v1", "schema.json")

/** Methods Planbridge sends (requests with their responses, and `session/cancel`). */
const CLIENT_METHODS = [
  "initialize",
  "authenticate",
  "session/new",
  "session/load",
  "session/resume",
  "session/list",
  "session/prompt",
  "session/set_mode",
  "session/set_config_option",
  "session/cancel"
] as const
/** Agent requests Planbridge answers (`AcpRequestOpen.ts`), and the notification it reads. */
const ANSWERED = ["session/request_permission", "elicitation/create"] as const
const AGENT_METHODS = [...ANSWERED, "session/update", "elicitation/complete"] as const

/** Definition name → [method, side], from the schema's `x-method` / `x-side` annotations. */
const methodDefs = (doc: SchemaDoc): Map<string, { readonly method: string; readonly side: string }> => {
  const out = new Map<string, { readonly method: string; readonly side: string }>()
  for (const [name, def] of Object.entries(doc.defs)) {
    if (!isObject(def)) continue
    const method = def["x-method"]
    const side = def["x-side"]
    if (typeof method === "string" && typeof side === "string") out.set(name, { method, side })
  }
  return out
}

export const acpSdkDrift = async (pinnedModules: string, newestModules: string): Promise<ProviderReport> => {
  const pinned = await readSchemaDoc(join(pinnedModules, SCHEMA))
  const newest = await readSchemaDoc(join(newestModules, SCHEMA)).catch(() => undefined)
  const before = methodDefs(pinned)
  const after = newest !== undefined ? methodDefs(newest) : new Map<string, { method: string; side: string }>()
  const wanted = new Set<string>([...CLIENT_METHODS, ...AGENT_METHODS])
  const surfaces: Array<Surface> = [...before]
    .filter(([, m]) => wanted.has(m.method))
    .map(([name, m]) => ({
      label: `${m.side === "client" ? "a2c" : "c2a"} ${m.method} (${name})`,
      result:
        newest === undefined || !after.has(name)
          ? { status: "missing", what: name }
          : diffSurface(pinned, pinned.defs[name] ?? null, newest, newest.defs[name], name)
    }))
  // Requests the agent may send the client (x-side client) that are new, and not answered.
  const answered = new Set<string>(ANSWERED)
  const knownBefore = new Set([...before.values()].map((m) => m.method))
  const refusedNew = [...after]
    .filter(([name, m]) => m.side === "client" && name.endsWith("Request") && !knownBefore.has(m.method))
    .map(([, m]) => m.method)
    .filter((m) => !answered.has(m))
  return {
    name: "@agentclientprotocol/sdk (ACP v1 schema)",
    pinned: (await readPackageJson(pinnedModules, "@agentclientprotocol/sdk"))?.version ?? "?",
    newest: (await readPackageJson(newestModules, "@agentclientprotocol/sdk"))?.version ?? "?",
    surfaces,
    refusedNew,
    notes: []
  }
}

/** The ACP wrapper agents, old and new names: versions only (their wire is the schema above). */
export const WRAPPERS = [
  "@zed-industries/codex-acp",
  "@zed-industries/claude-agent-acp",
  "@agentclientprotocol/codex-acp",
  "@agentclientprotocol/claude-agent-acp"
] as const

export const wrapperDrift = async (
  pinnedModules: string,
  newestModules: string,
  name: string
): Promise<ProviderReport> => {
  const pinned = await readPackageJson(pinnedModules, name)
  const newest = await readPackageJson(newestModules, name)
  const sdk = newest?.dependencies?.["@agentclientprotocol/sdk"]
  return {
    name,
    pinned: pinned?.version ?? "not pinned",
    newest: newest?.version ?? "not installed",
    surfaces: [],
    refusedNew: [],
    notes: sdk !== undefined ? [`newest speaks ACP through @agentclientprotocol/sdk ${sdk}`] : []
  }
}
