import type { RuntimeEvent, ThreadId } from "@planbridge/contracts"
import type { Effect } from "effect"
import { acpReplayMapping } from "../acp/AcpReplay.ts"
import { claudeReplayMapping } from "../claude/ClaudeReplay.ts"
import { codexReplayMapping } from "../codex/CodexReplay.ts"
import type { AdapterError } from "../AdapterError.ts"
import { replay, type ReplayMapping } from "../kernel/replay.ts"
import { eventLogReplayMapping } from "./EventLogReplay.ts"

/** A provider's mapping bound to the kernel's one `replay`, so that mappings of different states share a list. */
export type Replayer = (
  lines: ReadonlyArray<unknown>,
  options: { readonly threadId: ThreadId }
) => Effect.Effect<ReadonlyArray<RuntimeEvent>, AdapterError>

const bound = <State>(mapping: ReplayMapping<State>) => ({
  accepts: mapping.accepts,
  replay: ((lines, options) => replay(mapping, lines, options)) satisfies Replayer
})
const replayers = [
  bound(codexReplayMapping),
  bound(claudeReplayMapping),
  bound(acpReplayMapping),
  bound(eventLogReplayMapping)
]

/** The replayer for a transcript whose meta line names `provider`. */
export const replayerFor = (provider: string): Replayer | undefined =>
  replayers.find((replayer) => replayer.accepts(provider))?.replay
