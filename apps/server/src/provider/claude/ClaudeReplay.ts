import { Effect } from "effect"
import { step } from "./ClaudeMapping.ts"
import { initialClaudeState, type ClaudeMappingState } from "./ClaudeMappingState.ts"
import { claudeLineOf } from "./ClaudeTranscript.ts"
import { replayIds } from "../kernel/ids.ts"
import { stampAll, type ReplayMapping } from "../kernel/replay.ts"

/** Claude transcripts replay through the live mapping. Event ids: `kernel/ids.ts` (`replayIds`). */
export const claudeReplayMapping: ReplayMapping<ClaudeMappingState> = {
  label: "Claude",
  accepts: (provider) => provider === "claude",
  start: (meta, threadId) =>
    Effect.map(replayIds(meta, threadId), ({ eventId }) => ({ state: initialClaudeState(threadId), eventId })),
  step: (state, line, ctx) =>
    Effect.map(claudeLineOf(line, ctx.index), (claudeLine) => {
      const stepped = step(state, claudeLine)
      const events = stampAll(stepped.drafts, ctx, { provider: "claude", threadId: state.threadId })
      return { state: stepped.state, events }
    })
}
