import { Schema } from "effect"
import { InvalidLine } from "./native.ts"
import type { TrafficDirection, TrafficTap } from "./transport.ts"

/**
 * Recorded ACP traffic, one JSON object per line: a meta line first, then every JSON-RPC
 * message (and every agent line that is none) in processing order with its direction and
 * milliseconds since the start, and optionally the agent's exit. `replayTranscript` turns such
 * a file back into canonical events.
 */
export const TranscriptMeta = Schema.Struct({
  dir: Schema.Literal("meta"),
  provider: Schema.String,
  agent: Schema.String,
  startedAt: Schema.String,
  /** The id prefix the live session used, so replayed ids equal the recorded ones. */
  idPrefix: Schema.optionalKey(Schema.String)
})
export type TranscriptMeta = typeof TranscriptMeta.Type

export const TrafficLine = Schema.Struct({
  ms: Schema.Finite,
  dir: Schema.Literals(["client->agent", "agent->client"]),
  msg: Schema.Unknown
})
export type TrafficLine = typeof TrafficLine.Type

/**
 * A line from the agent that is no JSON-RPC message, where the session processed it (its
 * text cut to `INVALID_LINE_MAX_BYTES`); a replay turns it into the same `runtime.warning`.
 */
export const InvalidTrafficLine = Schema.Struct({
  ms: Schema.Finite,
  dir: Schema.Literal("agent->client:invalid"),
  ...InvalidLine.fields
})
export type InvalidTrafficLine = typeof InvalidTrafficLine.Type

export const ExitLine = Schema.Struct({
  ms: Schema.Finite,
  dir: Schema.Literal("exit"),
  exitKind: Schema.Literals(["graceful", "crashed", "killed", "server_restarted"]),
  exitCode: Schema.NullOr(Schema.Finite),
  signal: Schema.NullOr(Schema.String)
})
export type ExitLine = typeof ExitLine.Type

export const TranscriptLine = Schema.Union([TrafficLine, InvalidTrafficLine, ExitLine])
export type TranscriptLine = typeof TranscriptLine.Type

export interface TranscriptRecorder {
  readonly tap: TrafficTap
  readonly exit: (exit: Omit<ExitLine, "ms" | "dir">) => void
  /** The meta line followed by every recorded line. */
  readonly lines: () => ReadonlyArray<TranscriptMeta | TranscriptLine>
}

const decodeInvalidLine = Schema.decodeUnknownSync(InvalidLine)

export const makeTranscriptRecorder = (
  meta: Omit<TranscriptMeta, "dir" | "startedAt">,
  now: () => number = Date.now
): TranscriptRecorder => {
  const start = now()
  const head: TranscriptMeta = { dir: "meta", ...meta, startedAt: new Date(start).toISOString() }
  const lines: Array<TranscriptLine> = []
  return {
    tap: (dir: TrafficDirection, msg: unknown) => {
      const ms = now() - start
      if (dir === "agent->client:invalid") lines.push({ ms, dir, ...decodeInvalidLine(msg) })
      // Copied through JSON so later mutation by the SDK cannot change what was recorded.
      else lines.push({ ms, dir, msg: JSON.parse(JSON.stringify(msg)) as unknown })
    },
    exit: (exit) => lines.push({ ms: now() - start, dir: "exit", ...exit }),
    lines: () => [head, ...lines]
  }
}
