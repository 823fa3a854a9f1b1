import type { ThreadId } from "@planbridge/contracts"
import { Effect, Exit, Schema } from "effect"
import { ClaudeMapper, step } from "./ClaudeMapping.ts"
import { LocalLine, type NativeLine } from "./ClaudeTranscript.ts"
import { ReplayError } from "../kernel/ReplayError.ts"
import { stampAll, type ReplayMapping } from "../kernel/replay.ts"
import type { TranscriptLine } from "../kernel/transcript.ts"

const decodeLocal = Schema.decodeUnknownExit(LocalLine)

/**
 * A transcript line → the line the Claude mapping reads: an SDK message (`in`) with its time as
 * `_t`, or one of our local lines (`local`, `{kind,…}`) as `{_local: kind, …, t}`, decoded by its
 * Schema as before the one format. The reverse of `transcriptLineOf` (ClaudeTranscript.ts).
 */
export const nativeLineOf = (line: TranscriptLine, index: number): Exit.Exit<NativeLine, ReplayError> => {
  const msg = line.msg
  if (typeof msg !== "object" || msg === null || Array.isArray(msg))
    return Exit.fail(new ReplayError({ message: "msg is not a JSON object", line: index }))
  if (line.dir === "in") {
    if (!("type" in msg) || typeof msg.type !== "string")
      return Exit.fail(new ReplayError({ message: "an SDK message without a string type", line: index }))
    return Exit.succeed({ ...(msg as { readonly type: string }), _t: line.t })
  }
  if (line.dir === "out")
    return Exit.fail(
      new ReplayError({ message: "a Claude transcript has no out lines (our side is local)", line: index })
    )
  const { kind, ...fields } = msg as { readonly kind?: unknown }
  const decoded = decodeLocal({ _local: kind, ...fields, t: line.t })
  return Exit.isSuccess(decoded)
    ? Exit.succeed(decoded.value)
    : Exit.fail(new ReplayError({ message: `bad local line: ${String(decoded.cause)}`, line: index }))
}

/** Claude transcripts replay through the live mapping. Event ids: `<thread>/replay/<line>/<k>`. */
export const claudeReplayMapping: ReplayMapping<{ readonly mapper: ClaudeMapper; readonly threadId: ThreadId }> = {
  label: "Claude",
  accepts: (provider) => provider === "claude",
  start: (_meta, threadId) =>
    Effect.succeed({
      state: { mapper: new ClaudeMapper(threadId), threadId },
      eventId: ({ line, k }) => `${threadId}/replay/${line}/${k}`
    }),
  step: (state, line, ctx) =>
    Effect.map(nativeLineOf(line, ctx.index), (native) => ({
      state,
      events: stampAll(step(state.mapper, native).drafts, ctx, { provider: "claude", threadId: state.threadId })
    }))
}
