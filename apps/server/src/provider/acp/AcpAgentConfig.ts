import { existsSync, readFileSync } from "node:fs"
import { basename, join } from "node:path"
import { Result, Schema } from "effect"
import { describeCause } from "../../util/describeCause.ts"
import { adapterError, type AdapterError } from "../AdapterError.ts"
import type { AcpCommand, AcpProfile } from "./AcpProfile.ts"
import { claudeAcpProfile } from "./profiles/claudeAcp.ts"
import { codexAcpProfile } from "./profiles/codexAcp.ts"

/**
 * ACP agents a user adds without code: `serve --acp-agent NAME=COMMAND` (repeatable) and the
 * `acp-agents.json` file in the data dir. Each becomes a provider named NAME. The agents whose
 * modes Planbridge knows (codex-acp, claude-agent-acp) get their profile; any other agent gets
 * the generic one, whose capabilities the session narrows to the modes the agent offers.
 */

/** The provider slug a client sees; the built-in providers' names are taken. */
const AgentName = Schema.String.check(
  Schema.isPattern(/^[a-z][a-z0-9-]{0,63}$/u, { expected: "a lowercase name such as claude-acp" })
)
const RESERVED = ["codex", "claude", "cursor"]

export const AcpAgentEntry = Schema.Struct({
  name: AgentName,
  command: Schema.String.check(Schema.isNonEmpty()),
  args: Schema.optionalKey(Schema.Array(Schema.String)),
  /** Added to the agent's environment (e.g. a model endpoint); never logged. */
  env: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  /** Which known profile its modes follow; by default chosen from the command's name. */
  profile: Schema.optionalKey(Schema.Literals(["codex-acp", "claude-agent-acp", "generic"]))
})
export type AcpAgentEntry = typeof AcpAgentEntry.Type

const AcpAgentsFile = Schema.Struct({ agents: Schema.Array(AcpAgentEntry) })

const ACP_AGENTS_FILE = "acp-agents.json"

/** A flag or a file the server refuses, with where (`acp-agents.json: agents[1].name: …`): thrown. */
const refused = (message: string, cause?: unknown): AdapterError =>
  adapterError("invalid_config", message, cause === undefined ? {} : { cause })

/** `NAME=COMMAND [ARG…]` (split on spaces; use the file for arguments that contain spaces). */
export const parseAcpAgentFlag = (value: string): AcpAgentEntry => {
  const eq = value.indexOf("=")
  const [command, ...args] = value
    .slice(eq + 1)
    .split(/\s+/u)
    .filter((w) => w.length > 0)
  if (eq <= 0 || command === undefined) {
    throw refused(`--acp-agent must be NAME=COMMAND, e.g. claude-acp=claude-agent-acp; got '${value}'`)
  }
  const name = value.slice(0, eq)
  return checked(Schema.decodeUnknownResult(AcpAgentEntry)({ name, command, args }), `--acp-agent ${name}`)
}

/** A decoded value, or refused at `where` with the schema's message: each problem at its path (`at ["name"]`). */
const checked = <A>(decoded: Result.Result<A, Schema.SchemaError>, where: string): A => {
  if (Result.isFailure(decoded)) throw refused(`${where}: ${decoded.failure.message}`, decoded.failure)
  return decoded.success
}

/** The file's agents, or none when there is no file; a file that does not decode is refused with its path. */
export const loadAcpAgentsFile = (dataDir: string): ReadonlyArray<AcpAgentEntry> => {
  const path = join(dataDir, ACP_AGENTS_FILE)
  if (!existsSync(path)) return []
  let json: unknown
  try {
    json = JSON.parse(readFileSync(path, "utf8"))
  } catch (error) {
    throw refused(`${path}: not JSON: ${describeCause(error)}`, error)
  }
  return checked(Schema.decodeUnknownResult(AcpAgentsFile)(json, { errors: "all" }), path).agents
}

/** Flags after the file's agents; one name twice, or a built-in provider's name, is refused. */
export const mergeAcpAgents = (
  file: ReadonlyArray<AcpAgentEntry>,
  flags: ReadonlyArray<AcpAgentEntry>
): ReadonlyArray<AcpAgentEntry> => {
  const all = [...file, ...flags]
  for (const [index, agent] of all.entries()) {
    if (RESERVED.includes(agent.name)) {
      throw refused(`ACP agent '${agent.name}': the name of a built-in provider; choose another`)
    }
    if (all.findIndex((a) => a.name === agent.name) !== index) {
      throw refused(`ACP agent '${agent.name}' is configured twice`)
    }
  }
  return all
}

/** Exact mode ids only: an agent's other modes are `unknown`, never guessed. */
const genericProfile = (options: AcpCommand): AcpProfile => ({
  ...claudeAcpProfile(options),
  modes: { default: "default", agent: "default", plan: "plan", ask: "ask" },
  preferredModes: { default: "default", plan: "plan", ask: "ask" },
  capabilities: { ...claudeAcpProfile().capabilities, supportsAskMode: true, supportsExitPlanMode: false }
})

export const profileFor = (entry: AcpAgentEntry): AcpProfile => {
  const known = entry.profile ?? basename(entry.command)
  const options = { command: entry.command, args: entry.args ?? [] }
  const base =
    known === "codex-acp"
      ? codexAcpProfile(options)
      : known === "claude-agent-acp"
        ? claudeAcpProfile(options)
        : genericProfile(options)
  return { ...base, provider: entry.name, label: entry.name }
}
