/** The Codex provider: the adapter for the live app-server, and replay for recorded transcripts. */
export {
  makeCodexAdapter,
  type CodexAdapter,
  type CodexAdapterOptions,
  type CodexProviderSession
} from "./CodexAdapter.ts"
export { codexCapabilities } from "./CodexMappingState.ts"
export { codexReplayMapping } from "./CodexReplay.ts"
export type { TrafficEntry } from "./CodexTransport.ts"
