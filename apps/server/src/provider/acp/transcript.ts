import { Schema } from "effect"
import type { TrafficDirection, TrafficTap } from "./transport.ts"

/**
 * Recorded ACP traffic, one JSON object per line: a meta line first, then every JSON-RPC
 * message in wire order with its direction and milliseconds since the start, and optionally
 * the agent's exit. `replayTranscript` turns such a file back into canonical events.
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

export const ExitLine = Schema.Struct({
  ms: Schema.Finite,
  dir: Schema.Literal("exit"),
  exitKind: Schema.Literals(["graceful", "crashed", "killed", "server_restarted"]),
  exitCode: Schema.NullOr(Schema.Finite),
  signal: Schema.NullOr(Schema.String)
})
export type ExitLine = typeof ExitLine.Type

export const TranscriptLine = Schema.Union([TrafficLine, ExitLine])
export type TranscriptLine = typeof TranscriptLine.Type

export interface TranscriptRecorder {
  readonly tap: TrafficTap
  readonly exit: (exit: Omit<ExitLine, "ms" | "dir">) => void
  /** The meta line followed by every recorded line. */
  readonly lines: () => ReadonlyArray<TranscriptMeta | TranscriptLine>
}

export const makeTranscriptRecorder = (meta: Omit<TranscriptMeta, "dir" | "startedAt">, now: () => number = Date.now): TranscriptRecorder => {
  const start = now()
  const head: TranscriptMeta = { dir: "meta", ...meta, startedAt: new Date(start).toISOString() }
  const lines: Array<TranscriptLine> = []
  return {
    // Copied through JSON so later mutation by the SDK cannot change what was recorded.
    tap: (dir: TrafficDirection, msg: unknown) => lines.push({ ms: now() - start, dir, msg: JSON.parse(JSON.stringify(msg)) as unknown }),
    exit: (exit) => lines.push({ ms: now() - start, dir: "exit", ...exit }),
    lines: () => [head, ...lines]
  }
}
