import { resolve } from "node:path"
import {
  loadAcpAgentsFile,
  mergeAcpAgents,
  parseAcpAgentFlag,
  type AcpAgentEntry
} from "../provider/acp/AcpAgentConfig.ts"

/** The ACP agents `serve` and `providers` offer: `<data dir>/acp-agents.json`, then `--acp-agent` flags. */
export const configuredAcpAgents = (dataDir: string, flags: ReadonlyArray<string>): ReadonlyArray<AcpAgentEntry> =>
  mergeAcpAgents(loadAcpAgentsFile(resolve(dataDir)), flags.map(parseAcpAgentFlag))
