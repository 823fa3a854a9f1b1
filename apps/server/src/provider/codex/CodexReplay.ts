import { Effect, Exit, Result, Schema } from "effect"
import { step } from "./CodexMapping.ts"
import { decodeCodexLine } from "./CodexLine.ts"
import { initialMappingState, type CodexMappingState } from "./CodexMappingState.ts"
import { replayError } from "../kernel/ReplayError.ts"
import { replayIds } from "../kernel/ids.ts"
import { stampAll, type ReplayMapping } from "../kernel/replay.ts"

/**
 * Codex transcripts (the kernel's one format, `kernel/transcript.ts`) replay through the same
 * pure mapping the live adapter uses, each line decoded as the live transport decodes it
 * (`decodeCodexLine`). The meta line may say `initialMode` ("default" unless it says "plan").
 * Event ids: `kernel/ids.ts` (`replayIds`).
 */

const InitialMode = Schema.Struct({ initialMode: Schema.optionalKey(Schema.Literals(["default", "plan"])) })
const decodeInitialMode = Schema.decodeUnknownExit(InitialMode)

export const codexReplayMapping: ReplayMapping<CodexMappingState> = {
  label: "Codex",
  accepts: (provider) => provider === "codex",
  start: (meta, threadId) => {
    const mode = decodeInitialMode(meta)
    if (Exit.isFailure(mode)) return Effect.fail(replayError(String(mode.cause), 0))
    return Effect.map(replayIds(meta, threadId), ({ eventId }) => ({
      state: initialMappingState(threadId, mode.value.initialMode ?? "default"),
      eventId
    }))
  },
  step: (state, line, ctx) => {
    const decoded = decodeCodexLine(line)
    if (Result.isFailure(decoded)) return Effect.fail(replayError(decoded.failure, ctx.index))
    const result = step(state, decoded.success)
    const events = stampAll(result.drafts, ctx, { provider: "codex", threadId: state.threadId })
    return Effect.succeed({ state: result.state, events })
  }
}
