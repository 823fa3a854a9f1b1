import { Effect } from "effect"
import { AdapterError, type ProviderAdapter } from "../ProviderAdapter.ts"
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
          Effect.mapError(
            (e) =>
              new AdapterError({ reason: "start_failed", message: `${recording.path}:${e.line + 1}: ${e.message}` })
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
