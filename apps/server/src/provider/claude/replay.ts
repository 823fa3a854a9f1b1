import type { EventId, RuntimeEvent, ThreadId } from "@planbridge/contracts"
import { Effect, Schema } from "effect"
import { ClaudeMapper } from "./ClaudeMapping.ts"
import { stampDraft } from "../kernel/EventDraft.ts"
import { LocalLine, MetaLine, timeOf, type NativeLine } from "./ClaudeTranscript.ts"
import { ReplayError } from "../ReplayError.ts"

export { ReplayError }

const decodeMeta = Schema.decodeUnknownExit(MetaLine)
const decodeLocal = Schema.decodeUnknownExit(LocalLine)

const nativeLine = (value: unknown, index: number): Effect.Effect<NativeLine, ReplayError> => {
  if (typeof value !== "object" || value === null)
    return Effect.fail(new ReplayError({ message: "not a JSON object", line: index }))
  if ("_local" in value) {
    const decoded = decodeLocal(value)
    return decoded._tag === "Success"
      ? Effect.succeed(decoded.value)
      : Effect.fail(new ReplayError({ message: `bad local line: ${String(decoded.cause)}`, line: index }))
  }
  if ("type" in value && typeof value.type === "string" && "_t" in value && typeof value._t === "number") {
    return Effect.succeed(value as NativeLine)
  }
  return Effect.fail(new ReplayError({ message: "neither an SDK message with _t nor a _local line", line: index }))
}

/**
 * A recorded Claude transcript → the canonical events the live adapter emitted for it. Pure and
 * deterministic: event ids come from the thread and line position, times from the meta line's
 * `startedAt` plus each line's offset.
 */
export const replayTranscript = (
  lines: ReadonlyArray<unknown>,
  options: { readonly threadId: ThreadId }
): Effect.Effect<ReadonlyArray<RuntimeEvent>, ReplayError> =>
  Effect.gen(function* () {
    const meta = decodeMeta(lines[0])
    if (meta._tag === "Failure")
      return yield* new ReplayError({ message: "the first line must be the Claude meta line", line: 0 })
    const startedAt = Date.parse(meta.value.startedAt)
    if (Number.isNaN(startedAt))
      return yield* new ReplayError({ message: `bad startedAt ${meta.value.startedAt}`, line: 0 })
    const mapper = new ClaudeMapper(options.threadId)
    const events: Array<RuntimeEvent> = []
    for (let index = 1; index < lines.length; index++) {
      const line = yield* nativeLine(lines[index], index)
      const createdAt = new Date(startedAt + timeOf(line)).toISOString()
      mapper.step(line).forEach((draft, k) => {
        events.push(
          stampDraft(draft, {
            eventId: `${options.threadId}/replay/${index}/${k}` as EventId,
            createdAt,
            provider: "claude",
            threadId: options.threadId
          })
        )
      })
    }
    return events
  })
