import { acpReplayMapping } from "./acp/replay.ts"
import { claudeReplayMapping } from "./claude/replay.ts"
import { codexReplayMapping } from "./codex/replay.ts"
import { replayerOf, type Replayer } from "./kernel/replay.ts"

/** Every provider's mapping, bound to the kernel's one `replay`; the meta line's `provider` picks one. */
const replayers: ReadonlyArray<Replayer> = [
  replayerOf(codexReplayMapping),
  replayerOf(claudeReplayMapping),
  replayerOf(acpReplayMapping)
]

export const replayerFor = (provider: string): Replayer | undefined =>
  replayers.find((replayer) => replayer.accepts(provider))
