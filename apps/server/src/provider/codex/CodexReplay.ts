import { Result, Schema } from "effect"
import { step } from "./CodexMapping.ts"
import { decodeCodexLine } from "./CodexLine.ts"
import { initialMappingState } from "./CodexMappingState.ts"
import { draftReplay } from "../kernel/replay.ts"

/**
 * Codex transcripts (the kernel's one format, `kernel/transcript.ts`) replay through the same
 * pure mapping the live adapter uses, each line decoded as the live transport decodes it
 * (`decodeCodexLine`). The meta line may say `initialMode` ("default" unless it says "plan").
 * Event ids: `kernel/ids.ts` (`replayIds`).
 */

const InitialMode = Schema.Struct({ initialMode: Schema.optionalKey(Schema.Literals(["default", "plan"])) })
const decodeInitialMode = Schema.decodeUnknownResult(InitialMode)

export const codexReplayMapping = draftReplay({
  label: "Codex",
  accepts: (provider) => provider === "codex",
  start: (meta, threadId) => {
    const mode = decodeInitialMode(meta)
    if (Result.isFailure(mode)) return Result.fail(mode.failure.message)
    return Result.succeed({
      state: initialMappingState(threadId, mode.success.initialMode ?? "default"),
      provider: "codex"
    })
  },
  decode: decodeCodexLine,
  step
})
