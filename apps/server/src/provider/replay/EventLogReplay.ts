import { RuntimeEvent, type ThreadId } from "@planbridge/contracts"
import { Effect, Exit, Schema } from "effect"
import { replayError } from "../kernel/ReplayError.ts"
import { replayIds } from "../kernel/ids.ts"
import type { ReplayMapping } from "../kernel/replay.ts"

/**
 * Transcripts recorded from a data dir's event log (`planbridge record THREAD`): the meta line
 * says `"provider":"planbridge"` (and `recordedProvider`), each further line is an `in` line whose
 * `msg` is a canonical event as the log holds it, without `raw`. Any provider's session, live
 * against its real program, is then a fixture in the one transcript format; its replay is the
 * events again, on the replaying thread, with the replay's ids (`kernel/ids.ts`) and times.
 */

/** The meta line's `provider` of a transcript recorded from an event log. */
export const EVENT_LOG_PROVIDER = "planbridge"

const decodeEvent = Schema.decodeUnknownExit(RuntimeEvent)

export const eventLogReplayMapping: ReplayMapping<{ readonly threadId: ThreadId }> = {
  label: "event log",
  accepts: (provider) => provider === EVENT_LOG_PROVIDER,
  start: (meta, threadId) => Effect.map(replayIds(meta, threadId), ({ eventId }) => ({ state: { threadId }, eventId })),
  step: (state, line, ctx) => {
    if (line.dir !== "in") return Effect.fail(replayError(`an event log transcript has only 'in' lines`, ctx.index))
    const decoded = decodeEvent({
      ...(typeof line.msg === "object" && line.msg !== null ? line.msg : {}),
      threadId: state.threadId,
      eventId: ctx.nextEventId(),
      createdAt: ctx.now()
    })
    if (Exit.isFailure(decoded))
      return Effect.fail(replayError(`not a canonical event: ${String(decoded.cause)}`, ctx.index))
    return Effect.succeed({ state, events: [decoded.value] })
  }
}
