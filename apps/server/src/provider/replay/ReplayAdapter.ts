import { Effect } from "effect"
import { replayLineOf } from "../kernel/ReplayError.ts"
import { adapterError, type ProviderAdapter } from "../ProviderAdapter.ts"
import type { Recording } from "./ReplayDirectory.ts"
import { withThreadIds } from "./ReplayIds.ts"
import { scriptOf } from "./ReplayScript.ts"
import { startReplaySession, type ReplayOptions } from "./ReplaySession.ts"

/**
 * A recording offered as a provider: each session replays the transcript through its recorded
 * provider's own replay mapping for the session's thread (its prompt, request and plan ids made
 * the thread's own) and plays the canonical events as a live session. No program is started.
 */
export const makeReplayAdapter = (recording: Recording, options: ReplayOptions): ProviderAdapter => ({
  provider: recording.name,
  startSession: (start) =>
    Effect.gen(function* () {
      const replayed = yield* recording
        .replay(recording.lines, { threadId: start.threadId })
        .pipe(
          Effect.mapError((e) =>
            adapterError("start_failed", `${recording.path}:${replayLineOf(e) + 1}: ${e.message}`, { cause: e })
          )
        )
      const events = yield* withThreadIds(replayed, start.threadId)
      return yield* startReplaySession({
        provider: recording.name,
        capabilities: recording.capabilities,
        recordedMode: recording.recordedMode,
        segments: scriptOf(events),
        start,
        options
      })
    })
})
