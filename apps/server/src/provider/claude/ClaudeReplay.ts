import { Result } from "effect"
import { step } from "./ClaudeMapping.ts"
import { initialClaudeState } from "./ClaudeMappingState.ts"
import { claudeLineOf } from "./ClaudeTranscript.ts"
import { draftReplay } from "../kernel/replay.ts"

/** Claude transcripts replay through the live mapping. Event ids: `kernel/ids.ts` (`replayIds`). */
export const claudeReplayMapping = draftReplay({
  label: "Claude",
  accepts: (provider) => provider === "claude",
  start: (_meta, threadId) => Result.succeed({ state: initialClaudeState(threadId), provider: "claude" }),
  decode: claudeLineOf,
  step
})
