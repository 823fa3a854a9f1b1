import { Effect } from "effect"
import { step } from "./ClaudeMapping.ts"
import { initialClaudeState, type ClaudeMappingState } from "./ClaudeMappingState.ts"
import { claudeLineOf } from "./ClaudeTranscript.ts"
import { stampAll, type ReplayMapping } from "../kernel/replay.ts"

/** Claude transcripts replay through the live mapping. Event ids: `<thread>/replay/<line>/<k>`. */
export const claudeReplayMapping: ReplayMapping<ClaudeMappingState> = {
  label: "Claude",
  accepts: (provider) => provider === "claude",
  start: (_meta, threadId) =>
    Effect.succeed({
      state: initialClaudeState(threadId),
      eventId: ({ line, k }) => `${threadId}/replay/${line}/${k}`
    }),
  step: (state, line, ctx) =>
    Effect.map(claudeLineOf(line, ctx.index), (claudeLine) => {
      const stepped = step(state, claudeLine)
      const events = stampAll(stepped.drafts, ctx, { provider: "claude", threadId: state.threadId })
      return { state: stepped.state, events }
    })
}
